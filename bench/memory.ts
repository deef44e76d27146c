// Benchmark 1: peak memory of n8n (process and task runner) while a big video is downloaded, against the same
// workflow without the download, side by side with n8n's HTTP Request node and with a download that buffers.
import { nodeItems, runError } from '../test/e2e/n8n';
import type { MockClient } from '../test/mock/process';
import type { BenchConfig } from './config';
import { MiB } from './config';
import { binaryFile, dropBinaryData, executeSampled, expectSucceeded, nodeRuns, type NodeRun } from './n8nRun';
import type { TreeTrace } from './procTree';
import { makeFigure, type Figure } from './figures';
import type { BenchHome } from './setup';
import { median } from './stats';
import { generateNode, httpDownloadNode, linearWorkflow, settleNode } from './workflows';

/** Seconds of idle before the download (see settleNode). */
const SETTLE_SECONDS = 4;

type Variant = 'baseline' | 'video' | 'http' | 'buffered';

const VARIANTS: Variant[] = ['baseline', 'video', 'http', 'buffered'];

/** Which node does the downloading (its run window is read from n8n's run data). */
const DOWNLOADER: Record<Variant, string> = {
	baseline: 'Generate',
	video: 'Generate',
	http: 'HTTP Request',
	buffered: 'Generate',
};

export interface MemoryRun {
	variant: Variant;
	round: number;
	/** Highest sum of the tree's RSS over the whole run (50 ms samples). */
	peakTreeMiB: number;
	/** Highest tree RSS from the downloading node's start to just after its end. */
	peakInNodeMiB: number;
	/** Tree RSS while idle just before the downloading node started (median of the samples of the last 0.5 s). */
	beforeNodeMiB: number;
	/** peakInNode − beforeNode: what the node added while it ran. */
	addedMiB: number;
	/** VmHWM of the n8n process itself (exact, not sampled) and of the task runner. */
	peakMainMiB: number;
	peakRunnerMiB: number;
	/** Time of the downloading node (for the baseline: Generate without the download). */
	nodeMs: number;
	/** Size of the stored binary (checks the whole file arrived); 0 for the baseline. */
	storedBytes: number;
	samples: number;
}

type Memory = Omit<MemoryRun, 'variant' | 'round' | 'nodeMs' | 'storedBytes'>;

function summarise(trace: TreeTrace, node: NodeRun): Memory {
	const root = trace.rootPid;
	if (root === undefined || trace.samples.length < 10) throw new Error('bench: too few memory samples of the n8n process');
	const rss = (from: number, to: number) => trace.samples.filter((sample) => sample.at >= from && sample.at < to).map((sample) => sample.rss);
	const before = rss(node.start - 500, node.start);
	const during = rss(node.start, node.end + 250);
	if (before.length === 0 || during.length === 0) throw new Error('bench: no memory samples around the downloading node');
	const peakInNode = Math.max(...during);
	const beforeNode = median(before);
	const runner = Object.entries(trace.hwm)
		.filter(([pid]) => Number(pid) !== root)
		.reduce((sum, [, hwm]) => sum + hwm, 0);
	return {
		peakTreeMiB: Math.max(...trace.samples.map((sample) => sample.rss)) / MiB,
		peakInNodeMiB: peakInNode / MiB,
		beforeNodeMiB: beforeNode / MiB,
		addedMiB: (peakInNode - beforeNode) / MiB,
		peakMainMiB: (trace.hwm[root] ?? 0) / MiB,
		peakRunnerMiB: runner / MiB,
		samples: trace.samples.length,
	};
}

async function runInMemoryMode(
	{ home }: BenchHome,
	workflowId: string,
	log: (line: string) => void,
): Promise<{ exitCode: number | null; error: string | null; peakTreeMiB: number }> {
	const { result, trace } = await executeSampled(home, workflowId, { N8N_DEFAULT_BINARY_DATA_MODE: 'default' });
	dropBinaryData(home);
	const outcome = {
		exitCode: result.exitCode,
		error: (runError(result.json) as { message?: string } | undefined)?.message ?? null,
		peakTreeMiB: Math.max(0, ...trace.samples.map((sample) => sample.rss)) / MiB,
	};
	log(
		`  memory video in n8n's default (memory) binary mode: exit ${outcome.exitCode}, ` +
			`peak ${outcome.peakTreeMiB.toFixed(0)} MiB, ${outcome.error ?? 'no error'}`,
	);
	return outcome;
}

export interface MemoryHomes {
	plain: BenchHome;
	buffered: BenchHome;
}

export async function benchMemory(
	config: BenchConfig,
	mock: MockClient,
	homes: MemoryHomes,
	log: (line: string) => void,
): Promise<{ figures: Figure[]; details: unknown }> {
	const { sizeMiB, rounds } = config.memory;
	const prompt = `A long video for the memory benchmark [[instant]] [[size=${sizeMiB}M]] [[ttlMs=600000]]`;
	const { plain, buffered } = homes;
	const ids: Record<Variant, string> = {
		baseline: await plain.home.importWorkflow(
			linearWorkflow('Bench memory: baseline', [
				settleNode(SETTLE_SECONDS),
				generateNode('Generate', plain.credential, { prompt, download: false }),
			]),
		),
		video: await plain.home.importWorkflow(
			linearWorkflow('Bench memory: Video node', [
				settleNode(SETTLE_SECONDS),
				generateNode('Generate', plain.credential, { prompt }),
			]),
		),
		http: await plain.home.importWorkflow(
			linearWorkflow('Bench memory: HTTP Request node', [
				settleNode(SETTLE_SECONDS),
				generateNode('Generate', plain.credential, { prompt, download: false }),
				httpDownloadNode('HTTP Request', plain.credential, mock.url),
			]),
		),
		buffered: await buffered.home.importWorkflow(
			linearWorkflow('Bench memory: buffered download', [
				settleNode(SETTLE_SECONDS),
				generateNode('Generate', buffered.credential, { prompt }),
			]),
		),
	};

	const runs: MemoryRun[] = [];
	for (let round = 0; round < rounds; round++) {
		// The order rotates, so a machine that gets busier during a round does not always hit the same variant.
		const order = VARIANTS.map((_, index) => VARIANTS[(index + round) % VARIANTS.length]);
		for (const variant of order) {
			const { home } = variant === 'buffered' ? buffered : plain;
			const { result, trace } = await executeSampled(home, ids[variant]);
			expectSucceeded(result, `memory ${variant}`);
			const node = nodeRuns(result.json, DOWNLOADER[variant])[0];
			const item = nodeItems(result.json, DOWNLOADER[variant])[0];
			const storedBytes = variant === 'baseline' ? 0 : binaryFile(home, item.binary?.data).size;
			if (variant !== 'baseline' && storedBytes !== sizeMiB * MiB) {
				throw new Error(`bench: memory ${variant} stored ${storedBytes} bytes, expected ${sizeMiB * MiB}`);
			}
			dropBinaryData(home);
			const run: MemoryRun = { variant, round, nodeMs: node.ms, storedBytes, ...summarise(trace, node) };
			runs.push(run);
			log(
				`  memory ${variant.padEnd(8)} round ${round + 1}/${rounds}: ${run.beforeNodeMiB.toFixed(0)} → ${run.peakInNodeMiB.toFixed(0)} MiB ` +
					`(+${run.addedMiB.toFixed(0)}; run peak ${run.peakTreeMiB.toFixed(0)}: n8n ${run.peakMainMiB.toFixed(0)}, runner ${run.peakRunnerMiB.toFixed(0)}), ` +
					`node ${(run.nodeMs / 1000).toFixed(1)} s`,
			);
		}
	}

	// Once: the Video node in n8n's default binary mode (memory), where binary data is kept as one base64 string.
	// Not in a quick run: a smaller video would succeed and print itself as base64 into n8n's output.
	const memoryMode = config.quick ? null : await runInMemoryMode(plain, ids.video, log);

	const of = (variant: Variant) => runs.filter((run) => run.variant === variant);
	// Cross-check: the variant's whole-run peak minus the baseline's of the same round (taken side by side).
	const overBaselineRun = (variant: Variant) =>
		of(variant).map((run) => run.peakTreeMiB - of('baseline').find((base) => base.round === run.round)!.peakTreeMiB);
	const how = (what: string) =>
		`RSS of n8n + task runner (/proc VmRSS every 50 ms) in a fresh \`n8n execute\`: the highest while the node ${what} a ${sizeMiB} MiB video, minus the idle level just before it started; median of ${rounds} rounds.`;
	const figures: Figure[] = [
		makeFigure({
			id: 'memory.baselinePeak',
			bench: 1,
			label: `Idle baseline: n8n + task runner before the download`,
			unit: 'MiB',
			aggregate: 'median',
			samples: of('video').map((run) => run.beforeNodeMiB),
			how: `RSS of n8n + task runner just before the Video node started (after a ${SETTLE_SECONDS} s Wait, so the runner has started); median of ${rounds} runs.`,
		}),
		makeFigure({
			id: 'memory.videoAdded',
			bench: 1,
			label: `Video node downloading ${sizeMiB} MiB: added over baseline`,
			unit: 'MiB',
			aggregate: 'median',
			samples: of('video').map((run) => run.addedMiB),
			target: { op: '<=', value: 64 },
			how: how('(Generate: submit, poll, list, stream the download to disk in filesystem mode) delivers'),
		}),
		makeFigure({
			id: 'memory.httpAdded',
			bench: 1,
			label: `n8n's HTTP Request node (response format File), same file: added`,
			unit: 'MiB',
			aggregate: 'median',
			samples: of('http').map((run) => run.addedMiB),
			how: how("(n8n's HTTP Request node, response format File, filesystem mode) downloads"),
		}),
		makeFigure({
			id: 'memory.bufferedAdded',
			bench: 1,
			label: `A download that buffers the whole body, same file: added`,
			unit: 'MiB',
			aggregate: 'median',
			samples: of('buffered').map((run) => run.addedMiB),
			how: how('(the Video node with its download read into one Buffer, axios arraybuffer, before storing) delivers'),
		}),
	];
	const crossCheck = Object.fromEntries(
		VARIANTS.filter((variant) => variant !== 'baseline').map((variant) => [variant, median(overBaselineRun(variant))]),
	);
	const speeds = Object.fromEntries(
		VARIANTS.filter((variant) => variant !== 'baseline').map((variant) => [
			variant,
			Math.round(sizeMiB / (median(of(variant).map((run) => run.nodeMs)) / 1000)),
		]),
	);
	return {
		figures,
		details: {
			sizeMiB,
			settleSeconds: SETTLE_SECONDS,
			rounds,
			mibPerSecondOfDownloadingNode: speeds,
			/** Median over rounds of (whole-run peak − the baseline workflow's whole-run peak of the same round). */
			peakOverBaselineRunMiB: crossCheck,
			/** The Video node with N8N_DEFAULT_BINARY_DATA_MODE=default (one run): how it ended and its peak. */
			memoryMode,
			runs,
		},
	};
}

export { VARIANTS as MEMORY_VARIANTS };
