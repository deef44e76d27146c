// Case 3: the same batch built without this package: examples/without-this-package/video-batch-http-request-loop.json
// (n8n's HTTP Request node: submit, Wait, status, IF SUCCESS → download as a file, else back to the Wait), imported
// with the bench's prompts, base URL and wait, run by `n8n execute` against the same limited mock.
import * as fs from 'fs';
import * as path from 'path';

import { randomId, REPO_ROOT } from '../../test/e2e/n8n';
import type { MockClient } from '../../test/mock/process';
import { allNodeItems, dropBinaryData, executeSampled, type NodeRun, nodeRuns } from '../n8nRun';
import type { BenchHome } from '../setup';
import { floorSeconds, type BatchCase } from './config';
import { batchPrompts, countRequests, errorOf, setRateLimit, type Log, type RequestCounts } from './common';

export const HTTP_LOOP_EXAMPLE = path.join(REPO_ROOT, 'examples', 'without-this-package', 'video-batch-http-request-loop.json');
const EXAMPLE_BASE_URL = 'http://127.0.0.1:4010';
const EXAMPLE_CREDENTIAL = { id: 'GenGatewayHeader1', name: 'Gen Gateway API key (header)' };

export interface HttpLoopRun {
	floorSeconds: number;
	wallSeconds: number;
	ok: boolean;
	error?: string;
	/** Videos stored by the Download node. */
	delivered: number;
	/** Content answers whose bytes were the task's (mock log sha256 = the artifact's). */
	exact: number;
	counts: RequestCounts;
	/** Tasks created (paid) that no download fetched. */
	paidNotDelivered: number;
}

type Workflow = { id: string; nodes: Array<{ name: string; parameters: Record<string, unknown> }> };

export function httpLoopWorkflow(spec: BatchCase & { waitSeconds: number }, baseUrl: string, prompts: string[]): Workflow {
	const text = fs.readFileSync(HTTP_LOOP_EXAMPLE, 'utf8').split(EXAMPLE_BASE_URL).join(baseUrl);
	const workflow = JSON.parse(text) as Workflow;
	workflow.id = randomId();
	const byName = (name: string) => {
		const node = workflow.nodes.find((entry) => entry.name === name);
		if (!node) throw new Error(`bench:scale: the HTTP loop example has no node "${name}"`);
		return node;
	};
	byName('Prompts').parameters.jsonOutput = JSON.stringify({ prompts: prompts.map((prompt) => ({ prompt })) });
	const wait = workflow.nodes.find((node) => node.name.startsWith('Wait'))!;
	wait.parameters.amount = spec.waitSeconds;
	return workflow;
}

function span(runs: NodeRun[][]): number {
	const all = runs.flat();
	if (all.length === 0) return 0;
	return (Math.max(...all.map((run) => run.end)) - Math.min(...all.map((run) => run.start))) / 1000;
}

export async function runHttpLoop(
	spec: BatchCase & { waitSeconds: number },
	mock: MockClient,
	{ home }: BenchHome,
	log: Log,
): Promise<HttpLoopRun> {
	await home.importCredential({
		...EXAMPLE_CREDENTIAL,
		type: 'httpHeaderAuth',
		data: { name: 'Authorization', value: `Bearer ${mock.apiKey}` },
	});
	const [id] = await home.importWorkflows([httpLoopWorkflow(spec, mock.url, batchPrompts(spec, 'HTTP loop item'))]);
	await mock.reset();
	await setRateLimit(mock, spec.rateLimit);
	log(`  HTTP Request loop: ${spec.items} prompts × ${spec.taskSeconds} s at ${spec.rateLimit} req/s …`);
	const started = Date.now();
	const { result } = await executeSampled(home, id, {}, 40 * 60_000);
	const error = errorOf(result);
	const json = result.json;
	const nodes = ['Submit Task', 'Get Status', 'Download Video'];
	const wallSeconds = json ? span(nodes.map((name) => nodeRuns(json, name))) : (Date.now() - started) / 1000;
	const downloads = json ? allNodeItems(json, 'Download Video').filter((item) => item.binary?.data) : [];
	const mockLog = await mock.log();
	const served = mockLog.filter((entry) => entry.path.endsWith('/artifacts/video/content') && entry.status === 200 && entry.taskId);
	let exact = 0;
	for (const entry of served) if (entry.sha256 === (await mock.artifactSha256(entry.taskId!))) exact++;
	const counts = countRequests(mockLog);
	const fetched = new Set(served.map((entry) => entry.taskId));
	const created = new Set(mockLog.filter((entry) => entry.method === 'POST' && entry.taskId).map((entry) => entry.taskId));
	dropBinaryData(home);
	const run: HttpLoopRun = {
		floorSeconds: floorSeconds(spec),
		wallSeconds,
		ok: !error,
		error,
		delivered: downloads.length,
		exact: Math.min(exact, downloads.length),
		counts,
		paidNotDelivered: [...created].filter((taskId) => !fetched.has(taskId)).length,
	};
	log(
		`  HTTP Request loop: ${run.ok ? 'ok' : 'FAILED'} after ${wallSeconds.toFixed(1)} s; ${run.delivered}/${spec.items} delivered; ` +
			`${counts.submissions} tasks created (${counts.duplicatePrompts} prompts more than once), ${counts.requests} requests, ` +
			`${counts.limited} answered 429${run.error ? `; ${run.error.slice(0, 200)}` : ''}`,
	);
	return run;
}
