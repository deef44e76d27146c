/**
 * A key under a rate limit on a fake clock, for the pacer (nodes/shared/transport/pacer.ts) as queue-mode workers use it:
 * each worker a process of its own with its own PaceState, all on one limiter of the mock's (test/mock/limits.ts: a
 * token bucket holding a second's worth by default, or another kind: sliding-window log, fixed window, GCRA), answers
 * after a seeded random latency, a 429 seen sooner than an answer and waited out (whole seconds, as the mock's
 * Retry-After); and one execution's batch of video tasks on such a key (`taskBatch`, issue 52). No n8n, no timers: a
 * run of minutes takes milliseconds. Used by the pacer's unit tests and by `npm run bench:pace-model`.
 */
import { Pacer, PaceState, type PaceClass, type PacerTuning } from '../../nodes/shared/transport/pacer';
import { makeLimiter, type LimiterKind } from '../mock/limits';

/** A fake clock whose sleeps are timers fired in time order, letting every waiter react after each. */
export function fakeWorld() {
	let now = 1_000_000;
	const timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
	let seq = 0;
	const sleep = async (ms: number) => await new Promise<void>((resolve) => timers.push({ at: now + ms, seq: seq++, resolve }));
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

/** Seeded uniform numbers in [0, 1) (a linear congruential generator: the same seed, the same run). */
export function seeded(seed: number): () => number {
	let x = (seed * 7919 + 17) % 2147483648;
	return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

export interface Worker {
	/** Requests this worker has to get accepted (its share of the batch), or Infinity. */
	requests: number;
	/** It starts this long after the first (ms), and stops sending at `stopMs` (ms from the start) if set. */
	startMs?: number;
	stopMs?: number;
}

export interface KeyRun {
	/** From the start to the last accepted answer (s). */
	seconds: number;
	accepted: number;
	refused: number;
	/** Refused share of the requests granted after the first 10 s (the start's unpaced burst left out). */
	refusedAfterStart: number;
	/** Per worker: when its accepted answers came (ms from the start), and whether it found the key shared. */
	acceptedAt: number[][];
	shared: boolean[];
}

/**
 * `workers` on one key of `limit` requests/s, each sending `lanes` requests at a time. `shared`: every worker on one
 * PaceState, as if they shared what they learnt at once and for free (the most a shared place could give).
 */
export async function onOneKey(options: {
	limit: number;
	lanes: number;
	workers: Worker[];
	seed: number;
	tuning?: PacerTuning;
	shared?: boolean;
	spreadMs?: number;
	/** The key's limiter (test/mock/limits.ts); default the mock's token bucket. */
	kind?: LimiterKind;
}): Promise<KeyRun> {
	const { limit, lanes, workers, seed, tuning } = options;
	const world = fakeWorld();
	const random = seeded(seed);
	const latency = () => 30 + random() * 90;
	const start = world.clock();
	const limiter = makeLimiter(options.kind ?? 'bucket', limit);
	const one = new PaceState(tuning);
	const pacers = workers.map(() => new Pacer(world.clock, tuning, options.shared ? one : new PaceState(tuning)));
	const left = workers.map((worker) => worker.requests);
	const acceptedAt: number[][] = workers.map(() => []);
	const counts = { accepted: 0, refused: 0, lateAccepted: 0, lateRefused: 0 };
	const lane = async (index: number) => {
		const pacer = pacers[index];
		const { startMs = 0, stopMs = Infinity } = workers[index];
		// Lanes start over `spreadMs` (executions started one after another by their triggers).
		await world.sleep(startMs + random() * (options.spreadMs ?? 0));
		let retry = false;
		while ((retry || left[index] > 0) && world.clock() - start < stopMs) {
			if (!retry) left[index]--;
			await pacer.acquire(world.sleep, retry ? 'retry' : 'submit');
			const grantedAt = world.clock();
			const late = grantedAt - start > 10_000;
			const retryAfter = limiter.take(grantedAt);
			retry = retryAfter !== undefined;
			if (!retry) {
				counts.accepted++;
				if (late) counts.lateAccepted++;
				await world.sleep(latency());
				pacer.onAccepted(grantedAt);
				acceptedAt[index].push(world.clock() - start);
				continue;
			}
			counts.refused++;
			if (late) counts.lateRefused++;
			const wait = (retryAfter ?? 1) * 1000;
			await world.sleep(latency() * 0.4);
			pacer.onLimited(wait, grantedAt);
			await world.sleep(wait);
		}
	};
	const done = Promise.all(workers.flatMap((_, index) => Array.from({ length: lanes }, () => lane(index))));
	await world.run();
	await done;
	return {
		seconds: Math.max(0, ...acceptedAt.flat()) / 1000,
		accepted: counts.accepted,
		refused: counts.refused,
		refusedAfterStart: counts.lateRefused / Math.max(1, counts.lateAccepted + counts.lateRefused),
		acceptedAt,
		shared: pacers.map((pacer) => pacer.state.shared),
	};
}

/**
 * Two workers with equal shares of a batch of `limit` × 160 requests (a floor of 160 s), the second starting up to 3 s
 * after the first (seeded): the batch's wall ÷ floor, the refused shares, and how far apart the two finished.
 */
export async function equalShares(options: { limit: number; lanes: number; seed: number; tuning?: PacerTuning; shared?: boolean; spreadMs?: number }) {
	const { limit, seed } = options;
	const offset = Math.floor(seeded(seed + 1000)() * 3000);
	const requests = limit * 80;
	const run = await onOneKey({ ...options, workers: [{ requests }, { requests, startMs: offset }] });
	const ends = run.acceptedAt.map((times) => Math.max(0, ...times) / 1000);
	return { ...run, ratio: run.seconds / ((2 * requests) / limit), apart: Math.abs(ends[0] - ends[1]), offset };
}

export interface BatchRun {
	/** The service's own span, from the first request to the last answer (s), and the floor the limit forces. */
	seconds: number;
	floor: number;
	ratio: number;
	/** Accepted requests per second over the span, as a share of the limit; refused share of all requests sent. */
	used: number;
	refused: number;
	requests: number;
}

/**
 * One execution's batch as the Video node runs it with Wait for Completion: `prompts` tasks of `taskSeconds`, each a
 * submission, one status poll when the task is done, the artifact list and the download (4 requests: the floor
 * max(4N/R, T + 3N/R, N/R + T) of issues 22 and 39), on one key of `limit` requests/s of limiter `kind`. Each request
 * takes its pace turn (by class, as the transport does), then one of `lanes` (Max Concurrency, default 5), which it
 * holds through its 429s and their Retry-After; it reaches the service 1-10 ms after (the send) and is answered after
 * the seeded latency.
 */
export async function taskBatch(options: {
	kind: LimiterKind;
	limit: number;
	prompts: number;
	taskSeconds: number;
	seed: number;
	lanes?: number;
	tuning?: PacerTuning;
}): Promise<BatchRun> {
	const { kind, limit, prompts, taskSeconds, seed, tuning } = options;
	const world = fakeWorld();
	const random = seeded(seed);
	const latency = () => 30 + random() * 90;
	const limiter = makeLimiter(kind, limit);
	const pacer = new Pacer(world.clock, tuning);
	let free = options.lanes ?? 5;
	const gateQueue: Array<() => void> = [];
	const gate = async () => {
		if (free > 0) free--;
		else await new Promise<void>((resolve) => gateQueue.push(resolve));
	};
	const release = () => {
		const next = gateQueue.shift();
		if (next) next();
		else free++;
	};
	const counts = { accepted: 0, refused: 0, first: Infinity, last: 0 };
	const request = async (cls: PaceClass, age?: number) => {
		await pacer.acquire(world.sleep, cls, age);
		let grantedAt = world.clock();
		await gate();
		for (let attempt = 1; ; attempt++) {
			// A turn taken before the gate holds unless a 429 came since; then the request asks again, first.
			if (attempt > 1 || !pacer.turnHolds(grantedAt)) {
				await pacer.acquire(world.sleep, 'retry');
				grantedAt = world.clock();
			}
			await world.sleep(1 + random() * 9);
			const arrived = world.clock();
			counts.first = Math.min(counts.first, arrived);
			const retryAfter = limiter.take(arrived);
			if (retryAfter === undefined) {
				counts.accepted++;
				await world.sleep(latency());
				counts.last = Math.max(counts.last, world.clock());
				pacer.onAccepted(grantedAt);
				release();
				return;
			}
			counts.refused++;
			await world.sleep(latency() * 0.4);
			counts.last = Math.max(counts.last, world.clock());
			pacer.onLimited(retryAfter * 1000, grantedAt);
			await world.sleep(retryAfter * 1000);
		}
	};
	const task = async () => {
		await request('submit');
		const submitted = world.clock();
		await world.sleep(taskSeconds * 1000);
		await request('poll', submitted);
		await request('finish');
		await request('finish');
	};
	const done = Promise.all(Array.from({ length: prompts }, task));
	await world.run();
	await done;
	const seconds = (counts.last - counts.first) / 1000;
	const floor = Math.max((4 * prompts) / limit, taskSeconds + (3 * prompts) / limit, prompts / limit + taskSeconds);
	const requests = counts.accepted + counts.refused;
	return { seconds, floor, ratio: seconds / floor, used: counts.accepted / limit / seconds, refused: counts.refused / requests, requests };
}
