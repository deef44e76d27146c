// `npm run bench:pace-model` (issue 39, queue mode): which is better for queue-mode workers on one key, each pacing by
// itself or sharing what they learnt? On a fake clock (no n8n, a few seconds), the node's own pacer
// (nodes/shared/transport/pacer.ts) against one token bucket holding a second's worth (the mock's limit), answers
// after 50 ms, a 429 seen 20 ms after its request and waited out (whole seconds, as the mock's Retry-After). Two
// workers send from the start; one stops (after 60 or 150 s), the other goes on for 120 s more. Compared:
// - apart, before: a PaceState per worker, the pace as it was before this rule (never past the known limit's creep);
// - apart, now: a PaceState per worker, today's pace (past the limit found, the increase doubles per quiet window);
// - shared: both workers on one PaceState, as if they shared what they learnt at once and for free (the best any
//   shared place could do; n8n gives a community node none but a Data Table, at a sub-workflow run per access).
// Prints the share of the key used (accepted ÷ limit × duration) and of requests refused, over 16 runs (limits 2, 5,
// 10, 20 requests/s; 5 or 10 requests in flight per worker), and one worker alone at 20, 6 and 2 requests/s.
import { DEFAULT_PACER_TUNING, Pacer, PaceState, type PacerTuning } from '../../nodes/shared/transport/pacer';

type Model = 'apart, before' | 'apart, now' | 'shared';

function fakeWorld() {
	let now = 1_000_000;
	const timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
	let seq = 0;
	const sleep = async (ms: number) => await new Promise<void>((resolve) => timers.push({ at: now + ms, seq: seq++, resolve }));
	/** Fires timers in time order, letting every waiter react after each, as the event loop would. */
	const run = async () => {
		for (;;) {
			await new Promise((resolve) => setImmediate(resolve));
			timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
			const next = timers.shift();
			if (!next) return;
			now = Math.max(now, next.at);
			next.resolve();
		}
	};
	return { clock: () => now, sleep, run };
}

function pacers(model: Model, clock: () => number): Pacer[] {
	const before: PacerTuning = { ...DEFAULT_PACER_TUNING, boostAbove: Infinity };
	if (model === 'shared') {
		const state = new PaceState();
		return [new Pacer(clock, DEFAULT_PACER_TUNING, state), new Pacer(clock, DEFAULT_PACER_TUNING, state)];
	}
	const tuning = model === 'apart, before' ? before : DEFAULT_PACER_TUNING;
	return [new Pacer(clock, tuning), new Pacer(clock, tuning)];
}

/** Worker i sends `lanes` requests at a time for seconds[i] (0: not at all). */
async function onOneKey(model: Model, limit: number, seconds: [number, number], lanes: number) {
	const world = fakeWorld();
	const start = world.clock();
	const bucket = { tokens: limit, at: start };
	const workers = pacers(model, world.clock);
	let [accepted, limited] = [0, 0];
	const lane = async (pacer: Pacer, end: number) => {
		let retry = false;
		while (world.clock() < end) {
			await pacer.acquire(world.sleep, retry ? 'retry' : 'submit');
			const grantedAt = world.clock();
			bucket.tokens = Math.min(limit, bucket.tokens + ((grantedAt - bucket.at) / 1000) * limit);
			bucket.at = grantedAt;
			retry = bucket.tokens < 1;
			if (!retry) {
				bucket.tokens--;
				accepted++;
				await world.sleep(50);
				pacer.onAccepted();
				continue;
			}
			limited++;
			const wait = Math.max(1, Math.ceil((1 - bucket.tokens) / limit)) * 1000;
			await world.sleep(20);
			pacer.onLimited(wait, grantedAt);
			await world.sleep(wait);
		}
	};
	const done = Promise.all(workers.flatMap((pacer, i) => Array.from({ length: seconds[i] ? lanes : 0 }, () => lane(pacer, start + seconds[i] * 1000))));
	await world.run();
	await done;
	return { used: accepted / (limit * Math.max(...seconds)), refused: limited / (accepted + limited) };
}

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

async function main(): Promise<void> {
	const rows: string[] = ['| Model | Key used, mean of 16 | worst | Refused, mean | One worker alone at 20 / 6 / 2 req/s: used, refused |', '|---|--:|--:|--:|---|'];
	for (const model of ['apart, before', 'apart, now', 'shared'] as Model[]) {
		const runs: Array<{ used: number; refused: number }> = [];
		for (const limit of [2, 5, 10, 20]) for (const stop of [60, 150]) for (const lanes of [5, 10]) runs.push(await onOneKey(model, limit, [stop, stop + 120], lanes));
		const alone: Array<{ used: number; refused: number }> = [];
		for (const [limit, seconds] of [[20, 300], [6, 300], [2, 600]]) alone.push(await onOneKey(model, limit, [seconds, 0], 8));
		const mean = (pick: (run: { used: number; refused: number }) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
		const worst = Math.min(...runs.map((run) => run.used));
		rows.push(`| ${model} | ${pct(mean((run) => run.used))} | ${pct(worst)} | ${pct(mean((run) => run.refused))} | ${alone.map((run) => `${pct(run.used)}, ${pct(run.refused)}`).join(' / ')} |`);
	}
	process.stdout.write(`${rows.join('\n')}\n`);
}

void main();
