// Case 2's pace (issue 39): the queue cluster of ./queue (Redis, PostgreSQL, a main, 2 workers × concurrency 5) with
// nothing killed, E webhook executions × M prompts each through Video Generate with Wait for Completion (its defaults:
// submit, poll, list the artifacts, download into binary data, here n8n's database), all on one credential, against
// the mock limiting R requests/s on that key. Each worker paces its own executions; the limit is the key's.
import * as fs from 'fs';
import * as path from 'path';

import type { N8nServer } from '../../test/e2e/n8n';
import { unflatten } from '../../test/e2e/workflows/executions';
import type { MockClient } from '../../test/mock/process';
import { WORK_DIR } from '../setup';
import { chainConnections, generateNode, workflowOf } from '../workflows';
import { floorSeconds, queuePaceBatch, type BatchCase, type ScaleConfig } from './config';
import { batchPrompts, checkDeliveries, countRequests, requestKind, round, setRateLimit, type Delivery, type Log, type RequestCounts } from './common';
import { webhookNode } from './durable';
import { executionsOf, FINISHED, PROMPT_OF_ITEM, sleep, SPLIT_PROMPTS, startTwoWorkers } from './queue';

const WEBHOOK_PATH = 'scale-queue-pace';
const GENERATE = 'Generate';

export interface QueuePaceRun {
	executions: number;
	itemsPerExecution: number;
	/** The whole run as one batch (N = E × M), for the floor. */
	spec: BatchCase;
	floorSeconds: number;
	/** From the first webhook call to the last execution's stop (n8n's stoppedAt). */
	wallSeconds: number;
	/** Every execution ended `success`. */
	ok: boolean;
	error?: string;
	statuses: Record<string, number>;
	/** Output items of the Generate nodes, their stored binary data read back through n8n's REST API. */
	delivery: Delivery;
	counts: RequestCounts;
	/** Sum of the Generate nodes' run times (s) over N: worker time per task. */
	workerSecondsPerTask: number;
	/** Seconds from the first webhook call: the first and last execution start, and when each kind of request came. */
	timeline: {
		executionsStarted: [number, number];
		/** Accepted requests per kind: the first and the last. */
		accepted: Record<string, [number, number]>;
		/** 429 answers per kind of request. */
		refusedByKind: Record<string, number>;
	};
	n8nVersion: string;
}

function paceWorkflow(credential: { id: string; name: string }): Record<string, unknown> {
	const nodes = [webhookNode(WEBHOOK_PATH), SPLIT_PROMPTS, generateNode(GENERATE, credential, { prompt: PROMPT_OF_ITEM })];
	return workflowOf('Scale: queue mode pace', nodes, chainConnections(nodes));
}

/** A binary data id's bytes as n8n serves them to the editor (GET /rest/binary-data, the owner's session). */
async function storedBytes(main: N8nServer, cookie: string, id: string | undefined): Promise<Buffer> {
	if (!id) return Buffer.alloc(0);
	const response = await fetch(`${main.url}/rest/binary-data?id=${encodeURIComponent(id)}&action=download`, { headers: { cookie } });
	if (response.status !== 200) throw new Error(`bench:scale: GET /rest/binary-data answered ${response.status} for ${id}`);
	return Buffer.from(await response.arrayBuffer());
}

export async function runQueuePace(config: ScaleConfig, mock: MockClient, log: Log): Promise<QueuePaceRun> {
	const { executions, itemsPerExecution: M, concurrency } = config.queuePace;
	const spec = queuePaceBatch(config.queuePace);
	const floor = floorSeconds(spec);
	let workflowId = '';
	const { cluster, second } = await startTwoWorkers(mock, concurrency, {
		extraWorkflows: (credential) => {
			const workflow = paceWorkflow(credential);
			workflowId = String(workflow.id);
			return [workflow];
		},
	});
	try {
		const main = cluster.main;
		await mock.reset();
		await setRateLimit(mock, spec.rateLimit);
		const cookie = await main.ownerSession();
		const prompts = batchPrompts(spec, 'Queue pace');
		log(
			`  queuePace (n8n ${cluster.mainHome.install.version}): ${executions} executions × ${M} prompts × ${spec.taskSeconds} s ` +
				`at ${spec.rateLimit} req/s, 2 workers × ${concurrency}, one key (floor ${floor.toFixed(0)} s) …`,
		);
		const started = Date.now();
		for (let e = 0; e < executions; e++) {
			const body = JSON.stringify({ prompts: prompts.slice(e * M, (e + 1) * M) });
			const answer = await fetch(`${main.url}/webhook/${WEBHOOK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
			if (answer.status !== 200) throw new Error(`bench:scale: the queue pace webhook answered ${answer.status}`);
		}
		let list: Array<{ id: string; status: string }> = [];
		const deadline = Date.now() + 20 * 60_000;
		while (Date.now() < deadline) {
			list = await executionsOf(cluster.postgres, workflowId);
			if (list.length >= executions && list.every((entry) => FINISHED.includes(entry.status))) break;
			await sleep(2000);
		}
		const statuses: Record<string, number> = {};
		for (const entry of list) statuses[entry.status] = (statuses[entry.status] ?? 0) + 1;
		if (list.length < executions || !list.every((entry) => FINISHED.includes(entry.status))) {
			throw new Error(`bench:scale: the queue pace executions did not finish in 20 minutes: ${JSON.stringify(statuses)}`);
		}
		let stoppedAt = started;
		const starts: number[] = [];
		let nodeMs = 0;
		let error: string | undefined;
		const items: Parameters<typeof checkDeliveries>[0] = [];
		for (const entry of list) {
			const response = await main.rest('GET', `/rest/executions/${entry.id}`, { cookie });
			const meta = response.body.data;
			stoppedAt = Math.max(stoppedAt, Date.parse(meta.stoppedAt));
			starts.push(Date.parse(meta.startedAt));
			const data = unflatten(meta.data);
			error ??= data.resultData.error?.message as string | undefined;
			for (const run of (data.resultData.runData?.[GENERATE] ?? []) as Array<{ executionTime: number; data?: { main?: unknown[][] } }>) {
				nodeMs += run.executionTime ?? 0;
				items.push(...((run.data?.main?.[0] ?? []) as typeof items));
			}
		}
		const wallSeconds = (stoppedAt - started) / 1000;
		const delivery = await checkDeliveries(items, mock, (binary) => storedBytes(main, cookie, binary.id));
		const mockLog = await mock.log();
		// The whole log beside the results (not committed), for a closer look at the pace.
		fs.mkdirSync(WORK_DIR, { recursive: true });
		fs.writeFileSync(path.join(WORK_DIR, 'queuePace.mock-log.json'), JSON.stringify({ started, log: mockLog }));
		const since = (time: number) => round((time - started) / 1000, 1);
		const accepted: Record<string, [number, number]> = {};
		const refusedByKind: Record<string, number> = {};
		for (const entry of mockLog.filter((candidate) => candidate.path.startsWith('/v1/'))) {
			const kind = requestKind(entry);
			const at = since(Date.parse(entry.time));
			if (entry.status === 429) refusedByKind[kind] = (refusedByKind[kind] ?? 0) + 1;
			else accepted[kind] = [Math.min(accepted[kind]?.[0] ?? at, at), Math.max(accepted[kind]?.[1] ?? at, at)];
		}
		const run: QueuePaceRun = {
			executions,
			itemsPerExecution: M,
			spec,
			floorSeconds: floor,
			wallSeconds,
			ok: list.every((entry) => entry.status === 'success'),
			error,
			statuses,
			delivery,
			counts: countRequests(mockLog),
			workerSecondsPerTask: nodeMs / 1000 / spec.items,
			timeline: { executionsStarted: [since(Math.min(...starts)), since(Math.max(...starts))], accepted, refusedByKind },
			n8nVersion: cluster.mainHome.install.version,
		};
		log(
			`  queuePace: ${JSON.stringify(statuses)} in ${wallSeconds.toFixed(1)} s (${(wallSeconds / floor).toFixed(2)}× floor); ` +
				`${delivery.exact}/${spec.items} exact; ${run.counts.requests} requests, ${run.counts.limited} answered 429; ` +
				`${run.counts.duplicatePrompts} prompts twice; timeline ${JSON.stringify(run.timeline)}${error ? `; ${error.slice(0, 200)}` : ''}`,
		);
		return run;
	} finally {
		await second.stop('SIGKILL', 0);
		await cluster.stop();
	}
}
