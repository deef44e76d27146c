// Case 1, durable wait: a running n8n (`n8n start`, SQLite, filesystem binary data) runs Webhook → Rows → Split Out →
// Submit Video (Generate without waiting) → Wait (over n8n's 65 s threshold: parked in the database as `waiting`) →
// Check Video → Still Running back to the Wait, as examples/video-long-task-durable-wait.json does for one prompt.
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

import { readExecution, waitForWebhook } from '../../test/e2e/workflows/executions';
import { nodeType, type N8nServer } from '../../test/e2e/n8n';
import type { MockClient } from '../../test/mock/process';
import { binaryFile } from '../n8nRun';
import { sampleTree } from '../procTree';
import type { BenchHome } from '../setup';
import { chainConnections, rowsNodes, workflowOf } from '../workflows';
import { floorSeconds, MiB, type ScaleConfig } from './config';
import { batchPrompts, checkDeliveries, countRequests, median, setRateLimit, type Delivery, type Log, type RequestCounts } from './common';

export interface DurableRun {
	floorSeconds: number;
	wallSeconds: number;
	ok: boolean;
	status: string;
	error?: string;
	delivery: Delivery;
	counts: RequestCounts;
	checkRuns: number;
	/** Sum of the Gen Gateway nodes' run times (s): what the execution held a process for. */
	nodeSeconds: number;
	memory: { baselineMiB: number; peakMiB: number; addedMiB: number };
	/** SQLite file (+ WAL) growth from before the run to the first moment the execution was `waiting`. */
	databaseGrowthWaitingMiB: number;
	/** The waiting execution's run data as n8n stores it (execution_data.data, flatted JSON), bytes. */
	waitingDataBytes: number;
}

const WEBHOOK_PATH = 'scale-durable';

export type Node = Record<string, unknown> & { name: string };

/**
 * `head` (a trigger and the rows) → Submit Video (Generate without waiting) → Wait → Check Video, Still Running back to
 * the Wait: the loop of examples/video-long-task-durable-wait.json.
 */
export function checkLoopWorkflow(
	name: string,
	head: Node[],
	options: { prompt: string; waitSeconds: number; credential: { id: string; name: string }; submitOptions?: Record<string, unknown> },
): Record<string, unknown> {
	const credentials = { genGatewayApi: options.credential };
	const nodes: Node[] = [
		...head,
		{
			name: 'Submit Video',
			type: nodeType('genGatewayVideo'),
			typeVersion: 1,
			parameters: {
				operation: 'generate',
				model: 'gk_1.5',
				prompt: options.prompt,
				waitForCompletion: false,
				...(options.submitOptions ? { options: options.submitOptions } : {}),
			},
			credentials,
		},
		{
			name: 'Wait',
			type: 'n8n-nodes-base.wait',
			typeVersion: 1.1,
			webhookId: randomUUID(),
			parameters: { resume: 'timeInterval', amount: options.waitSeconds, unit: 'seconds' },
		},
		{
			name: 'Check Video',
			type: nodeType('genGatewayVideo'),
			typeVersion: 1,
			parameters: { operation: 'check', taskId: '={{ $json.task_id }}', submittedAt: '={{ $json.submitted_at }}' },
			credentials,
		},
	];
	const connections = chainConnections(nodes);
	connections['Check Video'] = { main: [[], [{ node: 'Wait', type: 'main', index: 0 }]] };
	return workflowOf(name, nodes, connections);
}

/** A production webhook that answers at once (`path`). */
export function webhookNode(path: string): Node {
	return {
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
	};
}

/** The durable batch as a production workflow: the Check loop behind a webhook and the rows. */
export function durableBatchWorkflow(prompts: string[], waitSeconds: number, credential: { id: string; name: string }): Record<string, unknown> {
	return checkLoopWorkflow('Scale: durable wait batch', [webhookNode(WEBHOOK_PATH), ...(rowsNodes(prompts) as unknown as Node[])], {
		prompt: '={{ $json.prompt }}',
		waitSeconds,
		credential,
	});
}

function databaseBytes(folder: string): number {
	return ['database.sqlite', 'database.sqlite-wal'].reduce((sum, name) => {
		const file = path.join(folder, name);
		return sum + (fs.existsSync(file) ? fs.statSync(file).size : 0);
	}, 0);
}

async function executionsOf(server: N8nServer, cookie: string, workflowId: string): Promise<Array<{ id: string; status: string }>> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const response = await server.rest('GET', `/rest/executions?filter=${filter}`, { cookie });
	return (response.body?.data?.results ?? []).map((entry: { id: string; status: string }) => ({ id: String(entry.id), status: entry.status }));
}

export async function runDurable(config: ScaleConfig, mock: MockClient, { home, credential }: BenchHome, log: Log): Promise<DurableRun> {
	const spec = config.durable;
	const workflow = durableBatchWorkflow(batchPrompts(spec, 'Durable item'), spec.waitSeconds, credential);
	const [workflowId] = await home.importWorkflows([workflow]);
	const activation = await home.cli(['update:workflow', `--id=${workflowId}`, '--active=true']);
	if (activation.exitCode !== 0) throw new Error(`bench:scale: cannot activate the durable workflow: ${activation.stdout.slice(-500)}`);
	const server = await home.startServer();
	try {
		const cookie = await server.ownerSession();
		await waitForWebhook(server, WEBHOOK_PATH);
		await mock.reset();
		await setRateLimit(mock, spec.rateLimit);
		const sampler = sampleTree((info) => info.pid === server.process.pid, 200);
		await new Promise((resolve) => setTimeout(resolve, 1500));
		const dbBefore = databaseBytes(home.n8nFolder);
		log(`  durable: ${spec.items} prompts × ${spec.taskSeconds} s at ${spec.rateLimit} req/s, Wait ${spec.waitSeconds} s (floor ${floorSeconds(spec).toFixed(0)} s) …`);
		const startedAt = Date.now();
		const answer = await fetch(`${server.url}/webhook/${WEBHOOK_PATH}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		if (answer.status !== 200) throw new Error(`bench:scale: the durable webhook answered ${answer.status}`);
		let dbWaiting: number | undefined;
		let waitingDataBytes = NaN;
		let final: { id: string; status: string } | undefined;
		const deadline = Date.now() + 30 * 60_000;
		while (Date.now() < deadline) {
			const [execution] = await executionsOf(server, cookie, workflowId);
			if (execution?.status === 'waiting' && dbWaiting === undefined) {
				dbWaiting = databaseBytes(home.n8nFolder);
				const parked = await server.rest('GET', `/rest/executions/${execution.id}`, { cookie });
				waitingDataBytes = String(parked.body?.data?.data ?? '').length;
			}
			if (execution && ['success', 'error', 'crashed', 'canceled'].includes(execution.status)) {
				final = execution;
				break;
			}
			await new Promise((resolve) => setTimeout(resolve, 1000));
		}
		const trace = sampler.stop();
		if (!final) throw new Error('bench:scale: the durable execution did not finish in 30 minutes');
		const meta = (await server.rest('GET', `/rest/executions/${final.id}`, { cookie })).body.data;
		const wallSeconds = (Date.parse(meta.stoppedAt) - Date.parse(meta.startedAt)) / 1000 || (Date.now() - startedAt) / 1000;
		const { data } = await readExecution(server, cookie, final.id);
		const checkRuns = (data.resultData.runData['Check Video'] ?? []) as Array<{ executionTime: number; data?: { main?: unknown[][] } }>;
		const done = checkRuns.flatMap((run) => (run.data?.main?.[0] ?? []) as Array<{ json: Record<string, unknown>; binary?: Record<string, { id?: string }> }>);
		const delivery = await checkDeliveries(done, mock, (binary) => binaryFile(home, binary).path);
		let nodeMs = 0;
		for (const name of ['Submit Video', 'Check Video']) {
			for (const run of (data.resultData.runData[name] ?? []) as Array<{ executionTime: number }>) nodeMs += run.executionTime;
		}
		const rss = trace.samples.map((sample) => sample.rss);
		const before = trace.samples.filter((sample) => sample.at < startedAt).map((sample) => sample.rss);
		const baseline = before.length > 0 ? median(before) : (rss[0] ?? 0);
		const peak = rss.length > 0 ? Math.max(...rss) : baseline;
		const error = data.resultData.error?.message as string | undefined;
		const run: DurableRun = {
			floorSeconds: floorSeconds(spec),
			wallSeconds,
			ok: final.status === 'success',
			status: final.status,
			error,
			delivery,
			counts: countRequests(await mock.log()),
			checkRuns: checkRuns.length,
			nodeSeconds: nodeMs / 1000,
			memory: { baselineMiB: baseline / MiB, peakMiB: peak / MiB, addedMiB: (peak - baseline) / MiB },
			databaseGrowthWaitingMiB: dbWaiting === undefined ? NaN : (dbWaiting - dbBefore) / MiB,
			waitingDataBytes,
		};
		log(
			`  durable: ${final.status} in ${wallSeconds.toFixed(1)} s (${(wallSeconds / run.floorSeconds).toFixed(2)}× floor), ${run.checkRuns} checks; ` +
				`${delivery.exact}/${spec.items} exact; ${run.counts.requests} requests, ${run.counts.limited} answered 429; ` +
				`database +${run.databaseGrowthWaitingMiB.toFixed(2)} MiB, run data ${(waitingDataBytes / 1024).toFixed(0)} KiB while waiting${error ? `; ${error}` : ''}`,
		);
		return run;
	} finally {
		await server.stop();
	}
}
