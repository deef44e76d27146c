// Benchmark 4: how long the node takes to deliver a video after SUCCESS, against curl fetching the same content
// endpoint of the same task into a file on the same disk.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { promisify } from 'util';

import { nodeItems, type N8nHome } from '../test/e2e/n8n';
import type { MockClient } from '../test/mock/process';
import type { LogEntry } from '../test/mock/types';
import type { BenchConfig } from './config';
import { MiB } from './config';
import { binaryFile, dropBinaryData, expectSucceeded } from './n8nRun';
import { makeFigure, type Figure } from './results';
import { WORK_DIR, type BenchHome } from './setup';
import { generateNode, linearWorkflow, settleNode } from './workflows';

const run = promisify(execFile);
export const CURL = '/usr/bin/curl';

/** One delivery by the node, read from the mock's log and the stored file. */
interface Delivery {
	taskId: string;
	/** From the status request that found SUCCESS (its arrival at the mock) to the binary file's last write. */
	ms: number;
	/** Of ms: from the SUCCESS status request to the content request (listing the artifacts in between). */
	beforeContentMs: number;
	/** Of ms: from the content request's arrival to the file's last write. */
	transferMs: number;
}

interface OverheadRound {
	round: number;
	/** The first download of a fresh `n8n execute` process (its code paths not yet optimised by V8). */
	cold: Delivery;
	/** The next download in the same process, as in a long-running n8n. */
	warm: Delivery;
	/** curl's own time_total for the content endpoint, written to a file: the mean of one run just before and one
	 * just after the node's. */
	curlMs: number;
	ratio: number;
	coldRatio: number;
}

/** curl fetching the content endpoint; the key goes in a header file (mode 600), never on the command line. */
async function curlDownload(mock: MockClient, taskId: string, sizeBytes: number): Promise<number> {
	const headers = path.join(WORK_DIR, 'curl-headers');
	const output = path.join(WORK_DIR, 'curl-download.mp4');
	fs.writeFileSync(headers, `Authorization: Bearer ${mock.apiKey}\n`, { mode: 0o600 });
	try {
		const { stdout } = await run(CURL, [
			'--silent',
			'--show-error',
			'--fail',
			'--header',
			`@${headers}`,
			'--output',
			output,
			'--write-out',
			'%{time_total}',
			`${mock.url}/v1/tasks/${taskId}/artifacts/video/content`,
		]);
		const size = fs.statSync(output).size;
		if (size !== sizeBytes) throw new Error(`bench: curl stored ${size} bytes, expected ${sizeBytes}`);
		return Number(stdout.trim()) * 1000;
	} finally {
		fs.rmSync(headers, { force: true });
		fs.rmSync(output, { force: true });
	}
}

const pathOf = (entry: LogEntry) => entry.path.split('?')[0];

const COLD = 'Generate (first)';
const WARM = 'Generate';

function delivery(home: N8nHome, requests: LogEntry[], run: unknown, nodeName: string, sizeBytes: number): Delivery {
	const item = nodeItems(run, nodeName)[0];
	const taskId = item.json.task_id as string;
	const file = binaryFile(home, item.binary?.data);
	if (file.size !== sizeBytes) throw new Error(`bench: ${nodeName} stored ${file.size} bytes, expected ${sizeBytes}`);
	const polls = requests.filter((entry) => entry.method === 'GET' && pathOf(entry) === `/v1/tasks/${taskId}`);
	const content = requests.find((entry) => entry.method === 'GET' && pathOf(entry) === `/v1/tasks/${taskId}/artifacts/video/content`);
	if (polls.length === 0 || !content) throw new Error(`bench: the mock saw no status or content request for ${taskId}`);
	const successAt = Date.parse(polls[polls.length - 1].time);
	const contentAt = Date.parse(content.time);
	return { taskId, ms: file.mtimeMs - successAt, beforeContentMs: contentAt - successAt, transferMs: file.mtimeMs - contentAt };
}

/** A task submitted straight to the mock (for curl's first download, before the node has made one). */
async function submitDirectly(mock: MockClient, prompt: string): Promise<string> {
	const response = await fetch(`${mock.url}/v1/tasks/vendor`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'application/json' },
		body: JSON.stringify({ model: 'gk_1.5', prompt }),
	});
	const body = (await response.json()) as { task_id?: string };
	if (!response.ok || !body.task_id) throw new Error(`bench: the mock did not accept a task (${response.status})`);
	return body.task_id;
}

export async function benchOverhead(
	config: BenchConfig,
	mock: MockClient,
	{ home, credential }: BenchHome,
	log: (line: string) => void,
): Promise<{ figures: Figure[]; details: unknown }> {
	const { sizeMiB, rounds } = config.overhead;
	if (!fs.existsSync(CURL)) throw new Error(`bench: ${CURL} is missing (apt-get install -y curl)`);
	fs.mkdirSync(WORK_DIR, { recursive: true });
	const prompt = (label: string) => `${label} [[instant]] [[size=${sizeMiB}M]] [[ttlMs=600000]]`;
	const workflowId = await home.importWorkflow(
		linearWorkflow('Bench overhead: deliver a video', [
			// As in the memory benchmark: the task runner's start-up must not share the CPU with the download.
			settleNode(4),
			// `n8n execute` is a fresh process: its first download runs through code V8 has not optimised yet. A
			// long-running n8n has; the second node measures that case, the first is reported as "cold".
			generateNode(COLD, credential, { prompt: prompt('Overhead, cold') }),
			generateNode(WARM, credential, { prompt: prompt('Overhead, warm') }),
		]),
	);

	// curl runs just before and just after each node run (the mean of both is compared), so a machine that gets
	// busier or quieter during a round affects both sides alike. Before: a task the bench submits itself.
	await mock.reset();
	const curlTask = await submitDirectly(mock, prompt('Overhead, fetched by curl'));
	const results: OverheadRound[] = [];
	for (let round = 0; round < rounds; round++) {
		const curlBefore = await curlDownload(mock, curlTask, sizeMiB * MiB);
		const result = await home.execute(workflowId);
		expectSucceeded(result, 'overhead');
		const requests = await mock.log();
		const cold = delivery(home, requests, result.json, COLD, sizeMiB * MiB);
		const warm = delivery(home, requests, result.json, WARM, sizeMiB * MiB);
		dropBinaryData(home);
		const curlAfter = await curlDownload(mock, warm.taskId, sizeMiB * MiB);
		const curlMs = (curlBefore + curlAfter) / 2;
		results.push({ round, cold, warm, curlMs, ratio: warm.ms / curlMs, coldRatio: cold.ms / curlMs });
		log(
			`  overhead ${sizeMiB} MiB round ${round + 1}/${rounds}: node ${warm.ms.toFixed(0)} ms ` +
				`(${warm.beforeContentMs.toFixed(0)} before the content request; cold ${cold.ms.toFixed(0)}), ` +
				`curl ${curlMs.toFixed(0)} ms, ratio ${(warm.ms / curlMs).toFixed(2)} (cold ${(cold.ms / curlMs).toFixed(2)})`,
		);
	}

	const figures: Figure[] = [
		makeFigure({
			id: 'overhead.nodeMs',
			bench: 4,
			label: `Node delivers a ${sizeMiB} MiB video after SUCCESS`,
			unit: 'ms',
			aggregate: 'median',
			digits: 0,
			samples: results.map((entry) => entry.warm.ms),
			how: `From the arrival at the mock of the status request that found SUCCESS to the last write of the binary file (list artifacts, download, store), the second video of the run; median of ${rounds} rounds.`,
		}),
		makeFigure({
			id: 'overhead.curlMs',
			bench: 4,
			label: `curl fetches the same content endpoint to a file`,
			unit: 'ms',
			aggregate: 'median',
			digits: 0,
			samples: results.map((entry) => entry.curlMs),
			how: `curl's time_total for the content endpoint (the same route, size and server), written to a file on the same disk; per round the mean of a run just before and one just after the node's (the second on the node's own task); median.`,
		}),
		makeFigure({
			id: 'overhead.ratio',
			bench: 4,
			label: `Node ÷ curl`,
			unit: 'x',
			aggregate: 'median',
			digits: 2,
			samples: results.map((entry) => entry.ratio),
			target: { op: '<=', value: 1.3 },
			how: `Per round, node time divided by curl time; median of ${rounds} rounds.`,
		}),
		makeFigure({
			id: 'overhead.coldRatio',
			bench: 4,
			label: `Node ÷ curl, first download of a fresh n8n process`,
			unit: 'x',
			aggregate: 'median',
			digits: 2,
			samples: results.map((entry) => entry.coldRatio),
			how: `As above for the first video of each \`n8n execute\` (V8 has not optimised the download path yet); median of ${rounds} rounds.`,
		}),
	];
	return { figures, details: { sizeMiB, rounds: results } };
}
