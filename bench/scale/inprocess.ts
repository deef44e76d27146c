// Case 1, in-process wait: one `n8n execute` of Rows → Split Out → Video Generate (Wait for Completion) for N prompts
// of about T seconds against a mock limiting R requests/s; and the memory run with 20 downloads of 10 MiB in flight.
import type { MockClient } from '../../test/mock/process';
import { allNodeItems, binaryFile, dropBinaryData, executeSampled, nodeRuns } from '../n8nRun';
import type { TreeTrace } from '../procTree';
import type { BenchHome } from '../setup';
import { generateNode, linearWorkflow, rowsNodes, settleNode } from '../workflows';
import { floorSeconds, MiB, type BatchCase, type ScaleConfig } from './config';
import { batchPrompts, checkDeliveries, countRequests, errorOf, median, setRateLimit, type Delivery, type Log, type RequestCounts } from './common';

export interface BatchRun {
	spec: BatchCase;
	floorSeconds: number;
	/** The Generate node's time in n8n's run data (s); the whole `n8n execute` when the run failed. */
	wallSeconds: number;
	ok: boolean;
	error?: string;
	delivery: Delivery;
	counts: RequestCounts;
	memory: { baselineMiB: number; peakMiB: number; addedMiB: number };
}

/** Tree RSS added over the 0.5 s before `start` (median), up to `end` + 0.25 s. */
export function memoryAround(trace: TreeTrace, start: number, end: number): BatchRun['memory'] {
	const rss = (from: number, to: number) => trace.samples.filter((s) => s.at >= from && s.at < to).map((s) => s.rss);
	const before = rss(start - 500, start);
	const during = rss(start, end + 250);
	const baseline = before.length > 0 ? median(before) : (trace.samples[0]?.rss ?? 0);
	const peak = during.length > 0 ? Math.max(...during) : baseline;
	return { baselineMiB: baseline / MiB, peakMiB: peak / MiB, addedMiB: (peak - baseline) / MiB };
}

const GENERATE = 'Generate';

/** One execution of the whole batch with the in-process wait (the node's defaults otherwise). */
export async function runInProcessBatch(
	spec: BatchCase,
	label: string,
	mock: MockClient,
	{ home, credential }: BenchHome,
	log: Log,
	options: { maxConcurrency?: number; promptExtra?: string } = {},
): Promise<BatchRun> {
	const prompts = batchPrompts(spec, label, options.promptExtra);
	const [id] = await home.importWorkflows([
		linearWorkflow(`Scale: ${label}`, [
			settleNode(4),
			...rowsNodes(prompts),
			generateNode(GENERATE, credential, { prompt: '={{ $json.prompt }}', maxConcurrency: options.maxConcurrency }),
		]),
	]);
	await mock.reset();
	await setRateLimit(mock, spec.rateLimit); // reset restores the mock's start-up limits
	const started = Date.now();
	log(`  ${label}: ${spec.items} prompts × ${spec.taskSeconds} s at ${spec.rateLimit} req/s (floor ${floorSeconds(spec).toFixed(0)} s) …`);
	const { result, trace } = await executeSampled(home, id, {}, 40 * 60_000);
	const error = errorOf(result);
	const runs = result.json ? nodeRuns(result.json, GENERATE) : [];
	const items = result.json ? allNodeItems(result.json, GENERATE) : [];
	const delivery = await checkDeliveries(items, mock, (binary) => binaryFile(home, binary).path);
	const counts = countRequests(await mock.log());
	const node = runs[0];
	const wallSeconds = node ? node.ms / 1000 : (Date.now() - started) / 1000;
	const memory = node ? memoryAround(trace, node.start, node.end) : { baselineMiB: 0, peakMiB: 0, addedMiB: 0 };
	dropBinaryData(home);
	const run: BatchRun = {
		spec,
		floorSeconds: floorSeconds(spec),
		wallSeconds,
		ok: !error,
		error,
		delivery,
		counts,
		memory,
	};
	log(
		`  ${label}: ${run.ok ? 'ok' : 'FAILED'} in ${wallSeconds.toFixed(1)} s (${(wallSeconds / run.floorSeconds).toFixed(2)}× floor); ` +
			`${delivery.exact}/${spec.items} exact; ${counts.requests} requests, ${counts.limited} answered 429; ` +
			`+${memory.addedMiB.toFixed(0)} MiB${run.error ? `; ${run.error.slice(0, 200)}` : ''}`,
	);
	return run;
}

/** 20 downloads of 10 MiB in flight at once: instant tasks, throttled downloads, Max Concurrency = downloads. */
export async function runMemory(config: ScaleConfig, mock: MockClient, home: BenchHome, log: Log): Promise<BatchRun & { inFlight: number }> {
	const { downloads, sizeMiB, bytesPerSecond } = config.memory;
	const spec: BatchCase = { items: downloads, taskSeconds: 0, spreadSeconds: 0, rateLimit: config.large.rateLimit };
	const run = await runInProcessBatch(spec, `memory ${downloads} × ${sizeMiB} MiB`, mock, home, log, {
		maxConcurrency: downloads,
		promptExtra: ` [[size=${sizeMiB}M]] [[bps=${bytesPerSecond}]]`,
	});
	// How many content downloads overlapped: those that arrived before the first could have finished.
	const contents = (await mock.log()).filter((entry) => entry.path.endsWith('/artifacts/video/content') && entry.status === 200);
	const times = contents.map((entry) => Date.parse(entry.time)).sort((a, b) => a - b);
	const transferMs = ((sizeMiB * MiB) / bytesPerSecond) * 1000;
	const inFlight = times.filter((time) => time < (times[0] ?? 0) + transferMs).length;
	return { ...run, inFlight };
}
