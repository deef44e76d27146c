// `npm run bench:pace-model` (issue 39, queue mode): the node's own pacer (nodes/shared/transport/paceState.ts) on a fake
// clock against one token bucket holding a second's worth (the mock's limiter), test/support/paceWorld.ts: no n8n, a few
// seconds. Prints three markdown tables:
// - two queue-mode workers with equal shares of a batch (limit × 160 requests, a floor of 160 s), the second starting up
//   to 3 s later, 72 runs (limits 5, 10, 20 requests/s; 5, 10 or 25 requests in flight per worker; 8 seeds): each
//   pacing by itself (a PaceState each, as n8n's queue mode runs them) against both on one PaceState (as if they shared
//   what they learnt at once and for free: the most any shared place could give);
// - the worker left when the other stops after 60 s: its requests/s from 20 s after;
// - one worker alone at 20, 6, 2 and 1 requests/s: the share of the limit used and of requests refused;
// - issue 52: one execution's batch of video tasks (N prompts of T s, 4 requests each, 5 lanes) against each kind of
//   limiter (test/mock/limits.ts), side by side: the service's span ÷ the floor max(4N/R, T + 3N/R, N/R + T), the share
//   of the limit used over that span, and the share of requests refused.
import { LIMITER_KINDS } from '../../test/mock/limits';
import { equalShares, onOneKey, taskBatch } from '../../test/support/paceWorld';

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
const times = (ratio: number) => `${ratio.toFixed(2)}×`;

async function twoWorkers(shared: boolean): Promise<string> {
	const runs = [];
	for (const limit of [5, 10, 20]) for (const lanes of [5, 10, 25]) for (let seed = 1; seed <= 8; seed++) runs.push(await equalShares({ limit, lanes, seed, shared }));
	const ratios = runs.map((run) => run.ratio).sort((a, b) => a - b);
	const refused = runs.map((run) => run.refusedAfterStart);
	const at = (share: number) => ratios[Math.min(ratios.length - 1, Math.floor(share * ratios.length))];
	const mean = refused.reduce((sum, value) => sum + value, 0) / refused.length;
	return `| ${shared ? 'both on one shared pace, at once and for free' : 'each worker pacing by itself'} | ${times(at(0.5))} | ${times(at(0.9))} | ${times(at(1))} | ${pct(mean)} | ${pct(Math.max(...refused))} |`;
}

async function workerLeft(limit: number): Promise<string> {
	const run = await onOneKey({ limit, lanes: 10, seed: limit, workers: [{ requests: Infinity, stopMs: 60_000 }, { requests: Infinity, startMs: 1500, stopMs: 140_000 }] });
	const rate = (from: number, to: number) => run.acceptedAt[1].filter((ms) => ms >= from * 1000 && ms < to * 1000).length / (to - from);
	return `${limit} req/s: ${rate(30, 60).toFixed(1)} → ${rate(80, 140).toFixed(1)}`;
}

async function alone(limit: number, seconds: number): Promise<string> {
	const run = await onOneKey({ limit, lanes: 8, seed: 1, workers: [{ requests: limit * seconds }] });
	return `${limit} req/s: ${pct(seconds / run.seconds)} used, ${pct(run.refused / (run.refused + run.accepted))} refused`;
}

/** The cases first (20 req/s × 1,000 prompts, 2 req/s × 200; tasks of 30, 10 and 60 s), then other limits. */
const BATCHES: Array<[number, number, number]> = [
	[20, 1000, 30],
	[2, 200, 30],
	[20, 1000, 10],
	[20, 1000, 60],
	[2, 200, 10],
	[2, 200, 60],
	[50, 2000, 30],
	[1, 100, 30],
	[0.5, 50, 30],
];

async function perKind(): Promise<string[]> {
	const rows = [`| Batch | ${LIMITER_KINDS.join(' | ')} |`, `|---|${LIMITER_KINDS.map(() => '--:').join('|')}|`];
	for (const [limit, prompts, taskSeconds] of BATCHES) {
		const cells: string[] = [];
		for (const kind of LIMITER_KINDS) {
			const run = await taskBatch({ kind, limit, prompts, taskSeconds, seed: 1 });
			cells.push(`${times(run.ratio)} · ${(run.used * 100).toFixed(0)} % · ${pct(run.refused)}`);
		}
		rows.push(`| ${prompts} × ${taskSeconds} s at ${limit} req/s | ${cells.join(' | ')} |`);
	}
	return rows;
}

async function each<T>(items: T[], run: (item: T) => Promise<string>): Promise<string> {
	const out: string[] = [];
	for (const item of items) out.push(await run(item));
	return out.join('; ');
}

async function main(): Promise<void> {
	const rows = [
		'| Two workers, equal shares, 72 runs | Wall ÷ floor, median | 90th percentile | worst | Refused after the start, mean | worst |',
		'|---|--:|--:|--:|--:|--:|',
		await twoWorkers(false),
		await twoWorkers(true),
		'',
		`The worker left, its requests/s while both sent (30–60 s) → from 20 s after the other stopped (80–140 s): ${await each([2, 10, 20], workerLeft)}.`,
		'',
		`One worker alone (8 in flight, the unpaced start included): ${await each([[20, 300], [6, 300], [2, 600], [1, 600]], ([limit, seconds]) => alone(limit, seconds))}.`,
		'',
		'One execution, each kind of limiter (span ÷ floor · share of the limit used · refused):',
		'',
		...(await perKind()),
	];
	process.stdout.write(`${rows.join('\n')}\n`);
}

void main();
