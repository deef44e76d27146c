// Benchmark 4: how long the node takes to deliver a video after SUCCESS, against curl fetching the same content
// endpoint into a file on the same disk, with n8n's own HTTP Request node alongside, and the CPU time each side uses.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { promisify } from 'util';

import { nodeItems, type N8nHome } from '../test/e2e/n8n';
import type { MockClient } from '../test/mock/process';
import type { LogEntry } from '../test/mock/types';
import type { BenchConfig } from './config';
import { MiB } from './config';
import { binaryFile, dropBinaryData, executeSampled, expectSucceeded } from './n8nRun';
import type { TreeTrace } from './procTree';
import { makeFigure, type Figure } from './figures';
import { WORK_DIR, type BenchHome } from './setup';
import { median } from './stats';
import { generateNode, httpDownloadNode, linearWorkflow, settleNode } from './workflows';

const run = promisify(execFile);
export const CURL = '/usr/bin/curl';

/** One delivery in an n8n run, read from the mock's log, the stored file and the CPU samples. */
interface Delivery {
	taskId: string;
	/** From the status request that found SUCCESS (its arrival at the mock) to the binary file's last write. */
	ms: number;
	/** Of ms: from the SUCCESS status request to the content request (listing the artifacts in between). */
	beforeContentMs: number;
	/** From the content request's arrival to the file's last write. */
	transferMs: number;
	/** CPU time of the n8n process during the transfer (50 ms samples, 10 ms ticks: approximate). */
	cpuMs: number;
}

interface CurlRun {
	ms: number;
	/** User + system CPU time of curl. */
	cpuMs: number;
}

interface OverheadRound {
	round: number;
	/** The first download of a fresh `n8n execute` process (its code paths not yet optimised by V8). */
	cold: Delivery;
	/** A later download in the same process, as in a long-running n8n. */
	warm: Delivery;
	/** n8n's HTTP Request node fetching the content endpoint of another task in the same process (warm). */
	http: Delivery;
	/** curl just before and just after the n8n run. */
	curl: [CurlRun, CurlRun];
	curlMs: number;
	ratio: number;
	coldRatio: number;
	httpRatio: number;
}

/**
 * curl fetching the content endpoint, run by bash to read its CPU time (`times`); the key goes in a header file
 * (mode 600), never on a command line.
 */
async function curlDownload(mock: MockClient, taskId: string, sizeBytes: number): Promise<CurlRun> {
	const headers = path.join(WORK_DIR, 'curl-headers');
	const output = path.join(WORK_DIR, 'curl-download.mp4');
	fs.writeFileSync(headers, `Authorization: Bearer ${mock.apiKey}\n`, { mode: 0o600 });
	try {
		const script = `"$@" || exit 1; echo; times`;
		const args = ['--silent', '--show-error', '--fail', '--header', `@${headers}`, '--output', output];
		const url = `${mock.url}/v1/tasks/${taskId}/artifacts/video/content`;
		const { stdout } = await run('bash', ['-c', script, 'bench-curl', CURL, ...args, '--write-out', '%{time_total}', url]);
		const size = fs.statSync(output).size;
		if (size !== sizeBytes) throw new Error(`bench: curl stored ${size} bytes, expected ${sizeBytes}`);
		// Line 1: time_total (s). `times`: the shell's user/sys, then its children's (curl's): "0m0.012s 0m0.034s".
		const lines = stdout.trim().split('\n');
		const seconds = (text: string) => {
			const match = /^(\d+)m([\d.]+)s$/.exec(text);
			if (!match) throw new Error(`bench: cannot read "${text}" from bash's times`);
			return Number(match[1]) * 60 + Number(match[2]);
		};
		const [user, system] = lines[lines.length - 1].trim().split(/\s+/).map(seconds);
		return { ms: Number(lines[0]) * 1000, cpuMs: (user + system) * 1000 };
	} finally {
		fs.rmSync(headers, { force: true });
		fs.rmSync(output, { force: true });
	}
}

const pathOf = (entry: LogEntry) => entry.path.split('?')[0];

const COLD = 'Generate (first)';
const WARM = 'Generate';
const TASK_FOR_HTTP = 'Generate (no download)';
const HTTP = 'HTTP Request';

/** CPU time of the n8n process between two moments, from the samples just outside them. */
function cpuBetween(trace: TreeTrace, from: number, to: number): number {
	const root = trace.rootPid!;
	const before = trace.samples.filter((sample) => sample.at <= from).pop() ?? trace.samples[0];
	const after = trace.samples.find((sample) => sample.at >= to) ?? trace.samples[trace.samples.length - 1];
	return (after.cpuMs[root] ?? 0) - (before.cpuMs[root] ?? 0);
}

function delivery(
	home: N8nHome,
	requests: LogEntry[],
	trace: TreeTrace,
	run: unknown,
	nodeName: string,
	taskId: string,
	sizeBytes: number,
): Delivery {
	const file = binaryFile(home, nodeItems(run, nodeName)[0].binary?.data);
	if (file.size !== sizeBytes) throw new Error(`bench: ${nodeName} stored ${file.size} bytes, expected ${sizeBytes}`);
	const polls = requests.filter((entry) => entry.method === 'GET' && pathOf(entry) === `/v1/tasks/${taskId}`);
	const content = requests.find(
		(entry) => entry.method === 'GET' && pathOf(entry) === `/v1/tasks/${taskId}/artifacts/video/content`,
	);
	if (polls.length === 0 || !content) throw new Error(`bench: the mock saw no status or content request for ${taskId}`);
	const successAt = Date.parse(polls[polls.length - 1].time);
	const contentAt = Date.parse(content.time);
	return {
		taskId,
		ms: file.mtimeMs - successAt,
		beforeContentMs: contentAt - successAt,
		transferMs: file.mtimeMs - contentAt,
		cpuMs: cpuBetween(trace, contentAt, file.mtimeMs),
	};
}

export async function benchOverhead(
	config: BenchConfig,
	mock: MockClient,
	{ home, credential }: BenchHome,
	log: (line: string) => void,
): Promise<{ figures: Figure[]; details: unknown }> {
	const { sizeMiB, rounds } = config.overhead;
	const size = sizeMiB * MiB;
	if (!fs.existsSync(CURL)) throw new Error(`bench: ${CURL} is missing (apt-get install -y curl)`);
	fs.mkdirSync(WORK_DIR, { recursive: true });
	const prompt = (label: string) => `${label} [[instant]] [[size=${sizeMiB}M]] [[ttlMs=600000]]`;
	const video = generateNode(WARM, credential, { prompt: prompt('Overhead, warm') });
	const viaHttp = [
		generateNode(TASK_FOR_HTTP, credential, { prompt: prompt('Overhead, HTTP Request node'), download: false }),
		httpDownloadNode(HTTP, credential, mock.url),
	];
	const start = [
		// As in the memory benchmark: the task runner's start-up must not share the CPU with the download.
		settleNode(4),
		// `n8n execute` is a fresh process: its first download runs through code V8 has not optimised yet. A
		// long-running n8n has; the later downloads measure that case, the first is reported as "cold".
		generateNode(COLD, credential, { prompt: prompt('Overhead, cold') }),
	];
	// The Video node and the HTTP Request node take turns at being second and third.
	const [videoFirst, httpFirst] = await home.importWorkflows([
		linearWorkflow('Bench overhead: Video node, then HTTP Request node', [...start, video, ...viaHttp]),
		linearWorkflow('Bench overhead: HTTP Request node, then Video node', [...start, ...viaHttp, video]),
	]);

	// curl runs just before and just after each n8n run (the mean of both is compared), so a machine that gets
	// busier or quieter during a round affects both sides alike. Before: a task the bench submits itself.
	await mock.reset();
	const curlTask = await submitDirectly(mock, prompt('Overhead, fetched by curl'));
	const results: OverheadRound[] = [];
	for (let round = 0; round < rounds; round++) {
		const before = await curlDownload(mock, curlTask, size);
		const { result, trace } = await executeSampled(home, round % 2 === 0 ? videoFirst : httpFirst);
		expectSucceeded(result, 'overhead');
		const requests = await mock.log();
		const taskOf = (name: string) => nodeItems(result.json, name)[0].json.task_id as string;
		const cold = delivery(home, requests, trace, result.json, COLD, taskOf(COLD), size);
		const warm = delivery(home, requests, trace, result.json, WARM, taskOf(WARM), size);
		const http = delivery(home, requests, trace, result.json, HTTP, taskOf(TASK_FOR_HTTP), size);
		dropBinaryData(home);
		const after = await curlDownload(mock, warm.taskId, size);
		const curlMs = (before.ms + after.ms) / 2;
		results.push({
			round,
			cold,
			warm,
			http,
			curl: [before, after],
			curlMs,
			ratio: warm.ms / curlMs,
			coldRatio: cold.ms / curlMs,
			httpRatio: http.transferMs / curlMs,
		});
		log(
			`  overhead ${sizeMiB} MiB round ${round + 1}/${rounds}: node ${warm.ms.toFixed(0)} ms (cold ${cold.ms.toFixed(0)}), ` +
				`HTTP Request node ${http.transferMs.toFixed(0)} ms, curl ${curlMs.toFixed(0)} ms; ` +
				`ratio ${(warm.ms / curlMs).toFixed(2)} (cold ${(cold.ms / curlMs).toFixed(2)}, HTTP Request ${(http.transferMs / curlMs).toFixed(2)}); ` +
				`CPU node ${warm.cpuMs} ms, curl ${after.cpuMs.toFixed(0)} ms`,
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
			how: `From the arrival at the mock of the status request that found SUCCESS to the last write of the binary file (list artifacts, download, store), a download after the process's first; median of ${rounds} rounds.`,
		}),
		makeFigure({
			id: 'overhead.curlMs',
			bench: 4,
			label: `curl fetches the same content endpoint to a file`,
			unit: 'ms',
			aggregate: 'median',
			digits: 0,
			samples: results.map((entry) => entry.curlMs),
			how: `curl's time_total for the content endpoint (the same route, size and server), written to a file on the same disk; per round the mean of a run just before and one just after the n8n run (the second on the node's own task); median.`,
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
			id: 'overhead.httpRatio',
			bench: 4,
			label: `n8n's HTTP Request node ÷ curl, same endpoint and size`,
			unit: 'x',
			aggregate: 'median',
			digits: 2,
			samples: results.map((entry) => entry.httpRatio),
			how: `n8n's HTTP Request node (response format File) in the same run, from its content request's arrival to the file's last write, divided by the round's curl time; median.`,
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
	const cpu = {
		nodeMs: median(results.map((entry) => entry.warm.cpuMs)),
		httpRequestNodeMs: median(results.map((entry) => entry.http.cpuMs)),
		curlMs: median(results.flatMap((entry) => entry.curl.map((one) => one.cpuMs))),
	};
	return { figures, details: { sizeMiB, medianCpuMsPerDownload: cpu, rounds: results } };
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
