// `npm run bench:scale`: issue 22's scale benchmark in a real n8n (2.41.1) against the mock limiting the request
// rate per key. Independent cases run side by side on their own mock and key (the limits are per key; the 2 req/s
// cases hardly use the CPU), the one-download case runs alone at the end. Writes bench/scale/results.json (quick:
// bench/.work/scale.quick.json; a subset: bench/.work/scale.partial.json) and, after a full run, the table in
// docs/performance.md. SCALE_QUICK=1: small sizes. SCALE_ONLY=large,memory,durable,tight,http,download: a subset.
// SCALE_QUEUE=1 adds the queue mode cases (queue, queueCalm, queueFast, queuePace), SCALE_ONLY=queuePace runs the
// pace case alone; queueCalm (nothing killed) and queueFast (nothing killed, a rate limit never reached) run the batch
// with the ledger on, then off.
// SCALE_MERGE=1 with a subset: its rows go into the committed results. SCALE_MERGE_FROM=<a scale.partial.json>: runs
// nothing, derives that file's rows from its details with this code and merges them into the committed results.
// SCALE_LIMITER=log-s (test/mock/limits.ts LIMITER_KINDS): the mock's limiter of that kind instead of the token bucket;
// written to bench/.work/scale.<kind>.json only (issue 52).
// GEN_GATEWAY_E2E_N8N=1 SCALE_ONLY=queue: case 2 on n8n 1.123.81 (with the ledger, n8n's default
// QUEUE_WORKER_MAX_STALLED_COUNT=1, so a killed worker's job runs again; without, 0), as rows of its own (`queue1.*`).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { e2eMajor, REPO_ROOT, type N8nHome } from '../../test/e2e/n8n';
import type { MockClient } from '../../test/mock/process';
import { machineOf, sourceOf } from '../provenance';
import { benchHome, WORK_DIR, type BenchHome } from '../setup';
import { figure, limitedMock, round, scaleLimiter, type Log, type ScaleFigure } from './common';
import { scaleConfig, type ScaleConfig } from './config';
import { medianOf, runDownload, type DownloadRound } from './download';
import { runDurable, type DurableRun } from './durable';
import { runHttpLoop, type HttpLoopRun } from './httpLoop';
import { runInProcessBatch, runMemory, type BatchRun } from './inprocess';
import { queueLedger, runQueue, type QueueRun } from './queue';
import { runQueuePace, type QueuePaceRun } from './queuePace';
import { renderScaleTable, SCALE_END, SCALE_START } from './render';

const CASES = ['large', 'memory', 'durable', 'tight', 'http', 'download', 'queue', 'queueCalm', 'queueFast', 'queuePace'] as const;
type CaseName = (typeof CASES)[number];
/**
 * Case 2 (queue mode) adds about 7 minutes, its pace case about 5 more: only with SCALE_QUEUE=1 or SCALE_ONLY=queue,
 * SCALE_ONLY=queuePace.
 */
const QUEUE_CASES: readonly CaseName[] = ['queue', 'queueCalm', 'queueFast', 'queuePace'];
const DEFAULT_CASES = CASES.filter((name) => !QUEUE_CASES.includes(name) || process.env.SCALE_QUEUE === '1');

const log: Log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

function selected(): CaseName[] {
	const only = process.env.SCALE_ONLY?.split(',').map((name) => name.trim()).filter(Boolean);
	if (!only) return [...DEFAULT_CASES];
	const unknown = only.filter((name) => !(CASES as readonly string[]).includes(name));
	if (unknown.length > 0) throw new Error(`SCALE_ONLY: unknown ${unknown.join(', ')}; known: ${CASES.join(', ')}`);
	return CASES.filter((name) => only.includes(name));
}

interface Outcomes {
	large?: BatchRun;
	memory?: BatchRun & { inFlight: number };
	durable?: DurableRun;
	tight?: BatchRun;
	http?: HttpLoopRun;
	download?: DownloadRound[];
	queue?: QueueRun;
	/** Case 2 without the task ledger (SCALE_QUEUE_LEDGER=both), for the ledger's cost and what it saves. */
	queueOff?: QueueRun;
	/** Case 2 on n8n 1.x (GEN_GATEWAY_E2E_N8N=1). */
	queue1?: QueueRun;
	/** Case 2 with nothing killed, ledger on and off (SCALE_ONLY=queueCalm): what the ledger itself costs a task. */
	queueCalm?: QueueRun;
	queueCalmOff?: QueueRun;
	/**
	 * queueCalm with a rate limit the batch never reaches (SCALE_ONLY=queueFast): worker time with no wait for a pace
	 * turn, so what is left is the nodes' own work and the ledger's.
	 */
	queueFast?: QueueRun;
	queueFastOff?: QueueRun;
	/** Case 2's pace: 2 workers, one key, nothing killed (issue 39). */
	queuePace?: QueuePaceRun;
}

/** Issue 39's targets for one execution under a limit (large, tight) and for the queue case; issue 22's otherwise. */
const ISSUE_39_ONE_EXECUTION = { wallRatio: 1.1, share429: 2 };
const ISSUE_22 = { wallRatio: 1.2, share429: 5 };
/** queueFast's rate limit: far above what 10 worker slots ask of the key, so no request waits for a pace turn. */
const FAST_RATE = 1000;

const share = (part: number, whole: number) => (whole > 0 ? (100 * part) / whole : 0);

function batchFigures(
	id: string,
	label: string,
	run: BatchRun | DurableRun | QueuePaceRun,
	items: number,
	caseNo: ScaleFigure['case'] = 1,
	targets = ISSUE_22,
): ScaleFigure[] {
	const ratio = run.wallSeconds / run.floorSeconds;
	return [
		figure({
			id: `${id}.exact`,
			case: caseNo,
			label: `${label}: videos delivered with exact bytes${run.ok ? '' : ` (run failed: ${run.error?.slice(0, 120)})`}`,
			value: run.delivery.exact,
			unit: '',
			ideal: items,
			target: { op: '>=', value: items },
			how: "Items with status SUCCESS whose stored file (queue mode: binary data read back through n8n's REST API) hashes to the sha256 the mock generated for the task.",
		}),
		figure({
			id: `${id}.failedBy429`,
			case: caseNo,
			label: `${label}: items failed by a 429`,
			value: run.delivery.failedBy429 + (!run.ok && /429|rate limit/i.test(run.error ?? '') ? items - run.delivery.delivered : 0),
			unit: '',
			ideal: 0,
			target: { op: '<=', value: 0 },
			how: 'Output items with an error naming a 429 or a rate limit, or every undelivered item when the run failed with one.',
		}),
		figure({
			id: `${id}.wallRatio`,
			case: caseNo,
			label: `${label}: wall ${round(run.wallSeconds, 0)} s ÷ floor ${round(run.floorSeconds, 0)} s`,
			value: round(ratio, 2),
			unit: 'x',
			ideal: 1,
			target: { op: '<=', value: targets.wallRatio },
			how: 'Wall time (the node in run data; the execution for the durable wait; the first webhook call to the last execution stopped in queue mode) over max(4N/R, T + 3N/R, N/R + T).',
		}),
		figure({
			id: `${id}.requestsPerTask`,
			case: caseNo,
			label: `${label}: requests per task (429s included)`,
			value: round(run.counts.requests / items, 2),
			unit: '',
			ideal: 4,
			how: "Every /v1 request the mock received for the run's key, over N.",
		}),
		figure({
			id: `${id}.share429`,
			case: caseNo,
			label: `${label}: share of requests answered 429`,
			value: round(share(run.counts.limited, run.counts.requests), 1),
			unit: '%',
			ideal: 0,
			target: { op: '<=', value: targets.share429 },
			how: "429 answers in the mock's log over all /v1 requests of the run.",
		}),
	];
}

function figuresOf(config: ScaleConfig, o: Outcomes): ScaleFigure[] {
	const out: ScaleFigure[] = [];
	const L = config.large;
	if (o.large) out.push(...batchFigures('large', `In-process wait, ${L.items} × ${L.taskSeconds} s at ${L.rateLimit} req/s`, o.large, L.items, 1, ISSUE_39_ONE_EXECUTION));
	if (o.memory) {
		out.push(
			figure({
				id: 'memory.added',
				case: 1,
				label: `Peak memory over baseline, ${o.memory.inFlight} downloads of ${config.memory.sizeMiB} MiB in flight`,
				value: round(o.memory.memory.addedMiB, 0),
				unit: 'MiB',
				target: { op: '<=', value: 256 },
				how: 'RSS of n8n and its task runner (50 ms samples) during the Generate node over the median of the 0.5 s before it.',
			}),
		);
	}
	if (o.large) {
		out.push(
			figure({
				id: 'large.memoryAdded',
				case: 1,
				label: `Peak memory over baseline during the ${L.items}-prompt run`,
				value: round(o.large.memory.addedMiB, 0),
				unit: 'MiB',
				how: 'As above, over the whole batch.',
			}),
		);
	}
	const D = config.durable;
	if (o.durable) {
		// The durable design waits at least W (≥ 65 s, n8n's threshold for parking) after the last submission.
		const designFloor = round(D.items / D.rateLimit + D.waitSeconds + (3 * D.items) / D.rateLimit, 0);
		out.push(...batchFigures('durable', `Durable wait (Wait ${D.waitSeconds} s → Check; N/R + W + 3N/R = ${designFloor} s), ${D.items} × ${D.taskSeconds} s at ${D.rateLimit} req/s`, o.durable, D.items));
		out.push(
			figure({
				id: 'durable.databaseGrowth',
				case: 1,
				label: `Database growth per waiting execution (${D.items} items parked; SQLite file + WAL: ${round(o.durable.databaseGrowthWaitingMiB, 2)} MiB)`,
				value: round(o.durable.waitingDataBytes / 1024, 0),
				unit: 'KiB',
				how: "The waiting execution's stored run data (execution_data, flatted JSON) read through n8n's REST API when first `waiting`; the SQLite file growth beside it.",
			}),
			figure({
				id: 'durable.nodeSeconds',
				case: 1,
				label: `Durable wait: seconds the Gen Gateway nodes held the process, per task`,
				value: round((o.durable.nodeSeconds * 1000) / D.items, 0),
				unit: 'ms',
				how: 'Sum of Submit Video and Check Video run times in the execution, over N.',
			}),
		);
	}
	const T = config.tight;
	if (o.tight) out.push(...batchFigures('tight', `In-process wait, ${T.items} × ${T.taskSeconds} s at ${T.rateLimit} req/s`, o.tight, T.items, 1, ISSUE_39_ONE_EXECUTION));
	const H = config.httpLoop;
	if (o.http) {
		const run = o.http;
		const label = `HTTP Request + Wait + IF, ${H.items} × ${H.taskSeconds} s at ${H.rateLimit} req/s`;
		out.push(
			figure({
				id: 'http.delivered',
				case: 3,
				label: `${label}: videos delivered${run.ok ? '' : ` (run failed: ${run.error?.slice(0, 120)})`}`,
				value: run.delivered,
				unit: '',
				ideal: H.items,
				how: 'Items with a binary out of the Download Video node.',
			}),
			figure({
				id: 'http.share429',
				case: 3,
				label: `${label}: share answered 429`,
				value: round(share(run.counts.limited, run.counts.requests), 1),
				unit: '%',
				ideal: 0,
				how: "429 answers over all /v1 requests in the mock's log.",
			}),
			figure({
				id: 'http.requestsPerTask',
				case: 3,
				label: `${label}: requests per prompt`,
				value: round(run.counts.requests / H.items, 2),
				unit: '',
				ideal: 4,
				how: 'All /v1 requests over N.',
			}),
			figure({
				id: 'http.duplicates',
				case: 3,
				label: `${label}: prompts submitted more than once (paid twice); paid tasks never downloaded: ${run.paidNotDelivered}`,
				value: run.counts.duplicatePrompts,
				unit: '',
				ideal: 0,
				how: 'Prompts with more than one created task; tasks created whose content was never fetched.',
			}),
			figure({
				id: 'http.wall',
				case: 3,
				label: `${label}: wall time (first HTTP node start → last end)`,
				value: round(run.wallSeconds, 0),
				unit: 's',
				ideal: round(run.floorSeconds, 0),
				how: 'From the run data of the HTTP nodes; the ideal is the floor.',
			}),
		);
	}
	if (o.download) {
		const r = o.download;
		const size = config.download.sizeMiB;
		const ms = (variant: keyof DownloadRound['ms']) => round(medianOf(r, (x) => x.ms[variant]), 0);
		const mem = (variant: keyof DownloadRound['addedMiB']) => round(medianOf(r, (x) => x.addedMiB[variant]), 0);
		const floorOf = (x: DownloadRound) => Math.max(x.ms.store1m, x.ms.read);
		const floor = round(medianOf(r, floorOf), 0);
		const row = (id: string, label: string, variant: keyof DownloadRound['ms'], how: string, ideal?: number): ScaleFigure =>
			figure({ id: `download.${id}`, case: 4, label: `${label} (+${mem(variant)} MiB)`, value: ms(variant), unit: 'ms', ideal, how });
		out.push(
			row('store1m', `n8n stores a generated ${size} MiB stream, no HTTP, 1 MiB chunks (64 KiB chunks: ${ms('store64k')} ms)`, 'store1m', 'Probe node: prepareBinaryData of a Readable; node run time in run data, median of rounds.'),
			row('read', `n8n's HTTP helper reads ${size} MiB, stores nothing`, 'read', 'Probe node: this.helpers.httpRequest, encoding stream, read to the end.'),
			row('readStore', `The helper's stream straight into prepareBinaryData`, 'readStore', 'Probe node: the least a streaming node can write.', floor),
			row('readGrouped', `The same, regrouped into 1 MiB chunks (what the node does on n8n 1.x only)`, 'readGrouped', 'Probe node: the regrouping of nodes/shared/binary/largeChunks.ts, inline.', floor),
			row('readBuffer', `The helper reads into one Buffer, then one store`, 'readBuffer', 'Probe node: encoding arraybuffer, then prepareBinaryData of the Buffer.', floor),
			row('node', `Gen Gateway Video delivers ${size} MiB (submit, status, list, download, store)`, 'video', 'Generate of an instant task; node run time.', floor),
			row('http', `n8n's HTTP Request node (File), same endpoint; curl ${round(medianOf(r, (x) => x.curlMs), 0)} ms`, 'http', 'Node run time; curl time_total just before and after each round.', floor),
			figure({
				id: 'download.nodeRatio',
				case: 4,
				label: `Video node ÷ floor (the slower of storing without HTTP and reading without storing)`,
				value: round(medianOf(r, (x) => x.ms.video / floorOf(x)), 2),
				unit: 'x',
				ideal: 1,
				target: { op: '<=', value: 1.1 },
				how: 'Per round: node time over max(store, read) of the same round; median.',
			}),
			figure({
				id: 'download.nodeMemory',
				case: 4,
				label: `Video node: memory added, against n8n's HTTP Request node`,
				value: mem('video'),
				unit: 'MiB',
				ideal: mem('store1m'),
				target: { op: '<=', value: mem('http') },
				how: 'Tree RSS peak during the node over the 0.5 s before it; median of rounds. Ideal: the no-HTTP store.',
			}),
		);
	}
	for (const [prefix, q] of [['queue', o.queue], ['queueOff', o.queueOff], ['queue1', o.queue1], ['queueCalm', o.queueCalm], ['queueCalmOff', o.queueCalmOff], ['queueFast', o.queueFast], ['queueFastOff', o.queueFastOff]] as const) {
		if (!q) continue;
		const settings = Object.entries(q.env).map(([key, value]) => `${key}=${value}`).join(', ');
		const on = prefix === 'queue1' ? ` on n8n ${q.n8nVersion}${settings ? ` (${settings})` : ''}` : '';
		const kills = q.killedCheckingWorkerAtSeconds === undefined ? '' : `, the other killed mid-check at ${round(q.killedCheckingWorkerAtSeconds, 0)} s`;
		const ledger = q.ledger
			? `task ledger on, ${q.retried} crashed/failed executions retried, then one Recover (${q.recovered ?? 0} tasks)`
			: 'task ledger off';
		const crash =
			q.killedWorkerAtSeconds === undefined
				? 'nothing killed'
				: `worker killed mid-submission at ${round(q.killedWorkerAtSeconds, 0)} s${kills}, main restarted at ${round(q.restartedMainAtSeconds ?? 0, 0)} s`;
		const rate = q.rateLimit === undefined || q.rateLimit === config.queue.rateLimit ? '' : ` at ${q.rateLimit} req/s (never reached)`;
		const label = `Queue mode${on}, ${q.executions} executions × ${q.prompts / q.executions} prompts${rate}, ${crash}; ${ledger}`;
		if (q.ledger) {
			out.push(
				figure({ id: `${prefix}.unknownOutcome`, case: 2, label: `${label}: submissions with an unknown outcome (ledger rows \`sending\`, or \`reported\` by Recover)`, value: (q.ledgerStates.sending ?? 0) + (q.ledgerStates.reported ?? 0), unit: '', ideal: 0, how: 'Killed between the service\'s accept and the ledger write, or while the POST was in flight: never resent, listed by Recover.' }),
			);
			if (prefix === 'queue1') {
				out.push(
					figure({ id: `${prefix}.jobsRerun`, case: 2, label: `${label}: jobs a worker ran again (n8n 1.x re-ran a stalled job: the same execution and job id)`, value: q.jobsRerun ?? 0, unit: '', how: "'Worker started execution N (job J)' more than once for one N and J in the workers' logs (a resume after a Wait is a new job)." }),
					figure({ id: `${prefix}.resumedInRerun`, case: 2, label: `${label}: tasks a re-run job took up from its own rows (n8n 1.x re-ran a killed worker's job, the same execution)`, value: q.resumedInRerun ?? 0, unit: '', how: 'Submit Video output items with resumed: true in executions that are not a Retry.' }),
				);
			}
		}
		if (q.executionsCreated !== undefined) {
			out.push(
				figure({ id: `${prefix}.executionsPerTask`, case: 2, label: `${label}: n8n executions created per task (the ledger's sub-workflow runs included)`, value: round(q.executionsCreated / q.prompts, 2), unit: '', how: "PostgreSQL's execution id sequence, over the prompts." }),
				figure({ id: `${prefix}.commitsPerTask`, case: 2, label: `${label}: database transactions per task (all of n8n's)`, value: round(q.databaseCommits / q.prompts, 1), unit: '', how: 'pg_stat_database.xact_commit over the run, over the prompts.' }),
			);
		}
		out.push(
			figure({ id: `${prefix}.duplicates`, case: 2, label: `${label}: prompts submitted twice`, value: q.counts.duplicatePrompts, unit: '', ideal: 0, target: { op: '<=', value: 0 }, how: 'Prompts with more than one task created at the mock.' }),
			figure({ id: `${prefix}.lost`, case: 2, label: `${label}: task_ids created but never delivered (executions ${JSON.stringify(q.statuses)})`, value: q.lostTaskIds, unit: '', ideal: 0, target: { op: '<=', value: 0 }, how: 'Tasks created at the mock whose content was never served whole with its bytes.' }),
			figure({ id: `${prefix}.exact`, case: 2, label: `${label}: tasks delivered with exact bytes`, value: q.exact, unit: '', ideal: q.prompts, how: 'Content answers whose sha256 is the task artifact\'s, distinct tasks.' }),
			figure({ id: `${prefix}.workerSeconds`, case: 2, label: `${label}: worker busy time per task`, value: round(q.workerSecondsPerTask * 1000, 0), unit: 'ms', how: 'Sum of node run times of all executions over the prompts.' }),
			...(q.workerCpuSecondsPerTask === undefined
				? []
				: [figure({ id: `${prefix}.workerCpu`, case: 2, label: `${label}: worker CPU per task`, value: round(q.workerCpuSecondsPerTask * 1000, 0), unit: 'ms', how: 'User and system CPU of the worker processes (n8n worker and its task runner; a killed one up to its last reading, every 2 s) over the prompts.' })]),
			...(q.nodeSecondsPerTask?.['Submit Video'] === undefined
				? []
				: [figure({ id: `${prefix}.submitSeconds`, case: 2, label: `${label}: of the worker busy time, Submit Video's per task`, value: round(q.nodeSecondsPerTask['Submit Video'] * 1000, 0), unit: 'ms', how: "Sum of Submit Video's run times (where the ledger writes) over the prompts; the rest is mostly Check Video." })]),
			figure({ id: `${prefix}.workerSecondsPerVideo`, case: 2, label: `${label}: worker busy time per video delivered`, value: round((q.workerSecondsPerTask * q.prompts * 1000) / Math.max(1, q.exact), 0), unit: 'ms', how: 'Sum of node run times of all executions (Retries included) over the videos delivered with exact bytes: a run killed before its end did work that delivered nothing.' }),
			figure({ id: `${prefix}.share429`, case: 2, label: `${label}: share answered 429`, value: round(share(q.counts.limited, q.counts.requests), 1), unit: '%', ideal: 0, target: { op: '<=', value: 5 }, how: "429 answers over all /v1 requests in the mock's log." }),
		);
	}
	if (o.queuePace) {
		const q = o.queuePace;
		const { items: N, taskSeconds, rateLimit } = q.spec;
		const label = `Queue mode pace, 2 workers, one key, nothing killed: ${q.executions} executions × ${q.itemsPerExecution} prompts × ${taskSeconds} s at ${rateLimit} req/s (Generate, Wait for Completion)`;
		out.push(
			// Issue 39: within 1.2× the floor, at most 5 % refused (the same as issue 22's batch targets).
			...batchFigures('queuePace', label, q, N, 2, ISSUE_22),
			figure({ id: 'queuePace.duplicates', case: 2, label: `${label}: prompts submitted twice (executions ${JSON.stringify(q.statuses)})`, value: q.counts.duplicatePrompts, unit: '', ideal: 0, target: { op: '<=', value: 0 }, how: 'Prompts with more than one task created at the mock.' }),
		);
	}
	return out;
}

/** Runs the selected cases and gathers their results (figures, details, where and from what they were measured). */
async function measure(config: ScaleConfig, cases: CaseName[]): Promise<ScaleResults> {
	const started = Date.now();
	const has = (name: CaseName) => cases.includes(name);
	// The committed results are 2.41.1's: on n8n 1.x only case 2 has rows of its own (queue1.*).
	if (e2eMajor() === 1 && cases.some((name) => name !== 'queue')) {
		throw new Error('bench:scale on n8n 1.x (GEN_GATEWAY_E2E_N8N=1): only SCALE_ONLY=queue (its rows are queue1.*, beside 2.41.1\'s)');
	}
	fs.mkdirSync(WORK_DIR, { recursive: true });
	const loads = [os.loadavg()[0]];
	const loadTimer = setInterval(() => loads.push(os.loadavg()[0]), 5000);
	log(`bench:scale: ${config.quick ? 'QUICK' : 'full'} run of ${cases.join(', ')}; load average ${loads[0].toFixed(2)}`);
	const mocks: MockClient[] = [];
	const homes: N8nHome[] = [];
	const outcomes: Outcomes = {};
	const stats: Record<string, unknown> = {};
	let n8nVersion = '';
	const newHome = async (mock: MockClient): Promise<BenchHome> => {
		const home = await benchHome(mock);
		homes.push(home.home);
		n8nVersion = home.home.install.version;
		return home;
	};
	const newMock = async (rate: number, label: string) => {
		const mock = await limitedMock(rate, label);
		mocks.push(mock);
		return mock;
	};
	const statsOf = async (mock: MockClient) => (await fetch(`${mock.url}/__mock/stats`)).json();
	try {
		const chainA = async () => {
			if (!has('large') && !has('memory') && !has('durable')) return;
			const mock = await newMock(config.large.rateLimit, 'large');
			const home = await newHome(mock);
			if (has('large')) {
				outcomes.large = await runInProcessBatch(config.large, 'in-process', mock, home, log);
				stats.large = await statsOf(mock);
			}
			if (has('memory')) outcomes.memory = await runMemory(config, mock, home, log);
			if (has('durable')) {
				outcomes.durable = await runDurable(config, mock, await newHome(mock), log);
				stats.durable = await statsOf(mock);
			}
		};
		const chainB = async () => {
			if (!has('tight')) return;
			const mock = await newMock(config.tight.rateLimit, 'tight');
			outcomes.tight = await runInProcessBatch(config.tight, 'tight', mock, await newHome(mock), log);
			stats.tight = await statsOf(mock);
		};
		const chainC = async () => {
			if (!has('http')) return;
			const mock = await newMock(config.httpLoop.rateLimit, 'http');
			outcomes.http = await runHttpLoop(config.httpLoop, mock, await newHome(mock), log);
			stats.http = await statsOf(mock);
		};
		const settled = await Promise.allSettled([chainA(), chainB(), chainC()]);
		for (const result of settled) if (result.status === 'rejected') log(`a case failed: ${(result.reason as Error).stack ?? result.reason}`);
		if (has('download')) {
			const mock = await newMock(0, 'download');
			outcomes.download = await runDownload(config, mock, await newHome(mock), log);
		}
		if (has('queue') && e2eMajor() === 1) {
			// n8n 1.x re-runs a killed worker's job (QUEUE_WORKER_MAX_STALLED_COUNT, default 1: N8N-REAL.md). Without the
			// ledger the re-run pays again, so it is turned off; with it, the re-run (the same execution id) takes up
			// its own rows and pays nothing again: n8n's default is kept, and the rows count the resumed items. The
			// re-run comes about a minute after the kill, and a job whose execution the main has marked `crashed` by then
			// is dropped: with the ledger the main's sweep keeps n8n's default (180 minutes), so the jobs are re-run.
			const mock = await newMock(config.queue.rateLimit, 'queue1');
			const env: Record<string, string> = queueLedger()
				? { QUEUE_WORKER_MAX_STALLED_COUNT: '1', N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '180' }
				: { QUEUE_WORKER_MAX_STALLED_COUNT: '0' };
			outcomes.queue1 = await runQueue(config, mock, log, env);
			stats.queue1 = await statsOf(mock);
		} else if (has('queue')) {
			// SCALE_QUEUE_LEDGER: on (default), off, or both (the case twice: the ledger's cost and what it saves).
			const both = process.env.SCALE_QUEUE_LEDGER === 'both';
			if (both || queueLedger()) {
				const mock = await newMock(config.queue.rateLimit, 'queue');
				outcomes.queue = await runQueue(config, mock, log, {}, true);
				n8nVersion ||= outcomes.queue.n8nVersion;
				stats.queue = await statsOf(mock);
			}
			if (both || !queueLedger()) {
				const mock = await newMock(config.queue.rateLimit, 'queueOff');
				outcomes.queueOff = await runQueue(config, mock, log, {}, false);
				n8nVersion ||= outcomes.queueOff.n8nVersion;
				stats.queueOff = await statsOf(mock);
			}
		}
		if (has('queueCalm')) {
			// The ledger's own cost: the same batch with nothing killed, on then off (no Retry, no Recover needed).
			for (const ledger of [true, false]) {
				const mock = await newMock(config.queue.rateLimit, ledger ? 'queueCalm' : 'queueCalmOff');
				const run = await runQueue(config, mock, log, {}, ledger, false);
				outcomes[ledger ? 'queueCalm' : 'queueCalmOff'] = run;
				n8nVersion ||= run.n8nVersion;
				stats[ledger ? 'queueCalm' : 'queueCalmOff'] = await statsOf(mock);
			}
		}
		if (has('queueFast')) {
			// The same, with no pace turn to wait for: worker time is then the nodes' own work (and the ledger's).
			for (const ledger of [true, false]) {
				const name = ledger ? 'queueFast' : 'queueFastOff';
				const mock = await newMock(FAST_RATE, name);
				const run = await runQueue(config, mock, log, {}, ledger, false, FAST_RATE);
				outcomes[name] = run;
				n8nVersion ||= run.n8nVersion;
				stats[name] = await statsOf(mock);
			}
		}
		if (has('queuePace')) {
			const mock = await newMock(config.queuePace.rateLimit, 'queuePace');
			outcomes.queuePace = await runQueuePace(config, mock, log);
			n8nVersion ||= outcomes.queuePace.n8nVersion;
			stats.queuePace = await statsOf(mock);
		}
		if (settled.some((result) => result.status === 'rejected')) throw new Error('bench:scale: a case failed (above)');
	} finally {
		clearInterval(loadTimer);
		for (const mock of mocks) await mock.stop();
		for (const home of homes) await home.dispose();
	}
	loads.push(os.loadavg()[0]);
	const date = new Date().toISOString();
	const machine = machineOf(n8nVersion, loads);
	const source = sourceOf();
	// Each case's own date, commit and load: merged results keep them per case.
	const runs = Object.fromEntries(Object.keys(outcomes).map((name) => [name, { date, ...source, loadAverage: machine.loadAverage }]));
	return {
		schema: 1,
		date,
		quick: config.quick,
		machine,
		source,
		config,
		durationSeconds: Math.round((Date.now() - started) / 1000),
		figures: figuresOf(config, outcomes).sort((a, b) => a.case - b.case),
		details: { ...outcomes, mockStats: stats, runs },
	};
}

interface ScaleResults {
	schema: 1;
	date: string;
	quick: boolean;
	machine: ReturnType<typeof machineOf>;
	source: ReturnType<typeof sourceOf>;
	config: ScaleConfig;
	durationSeconds: number;
	figures: ScaleFigure[];
	details: Outcomes & { mockStats: Record<string, unknown>; runs?: Record<string, unknown> };
}

/**
 * SCALE_MERGE_FROM: a subset's results file (bench/.work/scale.partial.json) as if it had just been measured: its
 * figures derived again from its details with this code (today's labels and targets), its date, load and commit kept.
 */
function fromPartial(file: string): ScaleResults {
	const partial = JSON.parse(fs.readFileSync(file, 'utf8')) as ScaleResults;
	if (partial.quick) throw new Error(`SCALE_MERGE_FROM: ${file} is a quick run; only full-size rows go into the committed results`);
	const { mockStats, runs, ...outcomes } = partial.details;
	const own = { date: partial.date, ...partial.source, loadAverage: partial.machine.loadAverage };
	return {
		...partial,
		figures: figuresOf(partial.config, outcomes).sort((a, b) => a.case - b.case),
		details: { ...outcomes, mockStats, runs: runs ?? Object.fromEntries(Object.keys(outcomes).map((name) => [name, own])) },
	};
}

async function main(): Promise<void> {
	const commandStarted = Date.now();
	const mergeFrom = process.env.SCALE_MERGE_FROM;
	const config = scaleConfig();
	const cases = selected();
	const results = mergeFrom ? fromPartial(mergeFrom) : await measure(config, cases);
	const loads = results.machine.loadAverage;
	let n8nVersion = results.machine.n8n;
	const figures = results.figures;
	// Another limiter than the mock's default (SCALE_LIMITER) is a comparison, never the committed results.
	const limiter = scaleLimiter();
	const complete =
		limiter === undefined && !mergeFrom && DEFAULT_CASES.every((name) => cases.includes(name)) && cases.includes('download');
	const committed = path.join(REPO_ROOT, 'bench', 'scale', 'results.json');
	// SCALE_MERGE=1 with a full-size subset (e.g. SCALE_ONLY=queue), or SCALE_MERGE_FROM: its figures replace those of
	// the same cases in the committed results, which keep the rest (each case's date, commit and load in details.runs).
	const merge =
		limiter === undefined &&
		!results.quick &&
		!complete &&
		(process.env.SCALE_MERGE === '1' || mergeFrom !== undefined) &&
		fs.existsSync(committed);
	if (merge) {
		const previous = JSON.parse(fs.readFileSync(committed, 'utf8')) as ScaleResults;
		const prefixOf = (entry: ScaleFigure) => entry.id.split('.')[0];
		const prefixes = new Set(figures.map(prefixOf));
		// A case's rows where its rows were before (new cases after the others of their table case).
		const place = new Map<string, number>();
		previous.figures.forEach((entry, index) => place.set(prefixOf(entry), Math.min(index, place.get(prefixOf(entry)) ?? index)));
		const at = (entry: ScaleFigure) => place.get(prefixOf(entry)) ?? Infinity;
		figures.splice(0, 0, ...previous.figures.filter((entry) => !prefixes.has(prefixOf(entry))));
		figures.sort((a, b) => a.case - b.case || at(a) - at(b));
		results.details = {
			...previous.details,
			...results.details,
			mockStats: { ...previous.details.mockStats, ...results.details.mockStats },
			runs: { ...previous.details.runs, ...results.details.runs },
		};
		// The merged rows' runs together (each case's own time is in details.runs), not this command's.
		results.durationSeconds += previous.durationSeconds;
		// The sizes the kept rows ran at; the merged case's own sizes are in its details (e.g. details.queue1.executions).
		results.config = previous.config;
		results.machine.n8n ||= previous.machine.n8n;
		n8nVersion ||= previous.machine.n8n;
	}
	const target = results.quick
		? path.join(WORK_DIR, 'scale.quick.json')
		: complete || merge
			? committed
			: path.join(WORK_DIR, limiter === undefined ? 'scale.partial.json' : `scale.${limiter}.json`);
	fs.writeFileSync(target, `${JSON.stringify(results, null, '\t')}\n`);
	const table = renderScaleTable(figures);
	const took = merge ? `the runs merged here took ${results.durationSeconds} s in all` : `the whole command took ${results.durationSeconds} s`;
	const machine = `${results.date.slice(0, 10)}, ${results.machine.cpus} cores, Node ${results.machine.node}, n8n ${n8nVersion}; load average ${loads.start.toFixed(1)}–${loads.max.toFixed(1)}; ${took}`;
	process.stdout.write(`\n${machine}\n\n${table}\n\n`);
	for (const f of figures.filter((entry) => entry.target && !entry.met)) process.stdout.write(`MISSED: ${f.label}: ${f.value}\n`);
	process.stdout.write(`Wrote ${path.relative(process.cwd(), target)} after ${Math.round((Date.now() - commandStarted) / 1000)} s.\n`);
	if (!results.quick && (complete || merge)) {
		const file = path.join(REPO_ROOT, 'docs', 'performance.md');
		const text = fs.readFileSync(file, 'utf8');
		const a = text.indexOf(SCALE_START);
		const b = text.indexOf(SCALE_END);
		if (a >= 0 && b > a) {
			fs.writeFileSync(file, `${text.slice(0, a + SCALE_START.length)}\nLatest run: ${machine}.\n\n${table}\n${text.slice(b)}`);
			process.stdout.write('Updated the At scale table in docs/performance.md.\n');
		}
	}
}

main().catch((error: unknown) => {
	process.stderr.write(`bench:scale failed: ${(error as Error).stack ?? String(error)}\n`);
	process.exit(1);
});
