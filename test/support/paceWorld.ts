/**
 * A key under a rate limit on a fake clock, for the pacer (nodes/shared/transport/pacer.ts) as queue-mode workers use it:
 * each worker a process of its own with its own PaceState, all on one token bucket holding a second's worth (the
 * mock's limiter), answers after a seeded random latency, a 429 seen sooner than an answer and waited out (whole
 * seconds, as the mock's Retry-After). No n8n, no timers: a run of minutes takes milliseconds. Used by the pacer's unit
 * tests and by `npm run bench:pace-model`.
 */
import { Pacer, PaceState, type PacerTuning } from '../../nodes/shared/transport/pacer';

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
}): Promise<KeyRun> {
	const { limit, lanes, workers, seed, tuning } = options;
	const world = fakeWorld();
	const random = seeded(seed);
	const latency = () => 30 + random() * 90;
	const start = world.clock();
	// The mock's token bucket: a second's worth, one token at least.
	const capacity = Math.max(1, limit);
	const bucket = { tokens: capacity, at: start };
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
			bucket.tokens = Math.min(capacity, bucket.tokens + ((grantedAt - bucket.at) / 1000) * limit);
			bucket.at = grantedAt;
			retry = bucket.tokens < 1;
			if (!retry) {
				bucket.tokens--;
				counts.accepted++;
				if (late) counts.lateAccepted++;
				await world.sleep(latency());
				pacer.onAccepted(grantedAt);
				acceptedAt[index].push(world.clock() - start);
				continue;
			}
			counts.refused++;
			if (late) counts.lateRefused++;
			const wait = Math.max(1, Math.ceil((1 - bucket.tokens) / limit)) * 1000;
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
