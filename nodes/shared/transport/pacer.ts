/**
 * Pacing: one request rate per execution and credential, learnt from the service's 429s. Part of the transport (every
 * request of the execution asks it for a turn); *whether* a 429 is retried and how long it waits is still decided by
 * retry.ts alone, the pacer only carries the decision out for every request of the execution at once.
 *
 * - Until the first 429 nothing is paced (no queue, no wait).
 * - A 429 blocks every request of the execution and credential until its wait is over (the Retry-After), and sets the
 *   rate to 90% of the lower of the current rate and the rate the service accepted (answers other than 429 per second
 *   since the last wait ended, over the last 3 s, at least 1 s; counted as at least 1 a second): a multiplicative
 *   decrease, once per wait (the answers of requests already in flight do not lower it again).
 * - Each accepted answer raises the rate by a small constant (additive increase: about 1% a second at saturation), so
 *   the pace recovers gradually when the 429s stop and finds the service's limit again without hammering it.
 * - Turns are granted by priority: a request retried after a 429 first, then the end of a finished task (artifact
 *   list, download, any other read), then submissions, then status polls (oldest first). So a batch finishes the tasks
 *   it has instead of polling tasks that are still running.
 * Sleeping happens only through the execution's cancellable wait (given by the caller): no timers of our own.
 */

export type PaceClass = 'retry' | 'finish' | 'submit' | 'poll';

const PRIORITY: Record<PaceClass, number> = { retry: 0, finish: 1, submit: 2, poll: 3 };

type Sleep = (ms: number) => Promise<void>;

interface PacerTuning {
	/** After a 429 the rate is this share of the rate the execution was sending at (once per wait). */
	decrease: number;
	/** Requests/s added per accepted answer (at saturation: this × rate per second). */
	increasePerAnswer: number;
	/** Never slower than this (requests/s). */
	minRate: number;
	/** The accepted rate is measured over this window (at least one second of it, none of it blocked). */
	windowMs: number;
}

const DEFAULT_PACER_TUNING: PacerTuning = {
	decrease: 0.9,
	increasePerAnswer: 0.01,
	minRate: 0.2,
	windowMs: 3000,
};

interface Waiter {
	priority: number;
	seq: number;
	resolve: () => void;
	reject: (error: unknown) => void;
}

export class Pacer {
	/** Requests per second allowed now; Infinity until the first 429. */
	rate = Infinity;
	/** No turn is granted before this (epoch ms): the wait a 429 asked for. */
	blockedUntil = 0;
	/** When the last 429 came (epoch ms; 0 = never): a turn granted before it is stale. */
	lastLimitedAt = 0;
	/** The earliest time of the next turn (spacing 1/rate). */
	private nextAt = 0;
	/** Times of accepted answers (not 429) within the window: the rate the service takes. */
	private answers: number[] = [];
	private firstAnswerAt: number | undefined;
	/** Measuring starts again when a wait ends (the time blocked is not sending time). */
	private measureFrom = 0;
	/** A 429 answered before this does not lower the rate again (it belongs to the same wait). */
	private decreaseEpochEnd = 0;
	private queue: Waiter[] = [];
	private pumping = false;
	private seq = 0;
	private pollPhases = 0;
	lastUsed: number;
	/** Counters (for logs and tests). */
	readonly stats = { turns: 0, waitedTurns: 0, limited: 0, decreases: 0 };

	constructor(
		private readonly clock: () => number = Date.now,
		private readonly tuning: PacerTuning = DEFAULT_PACER_TUNING,
	) {
		this.lastUsed = clock();
	}

	get idle(): boolean {
		return this.queue.length === 0 && !this.pumping;
	}

	/** Whether a turn granted at `grantedAt` still holds: no 429 came since (else the request asks again). */
	turnHolds(grantedAt: number): boolean {
		return this.lastLimitedAt < grantedAt;
	}

	/** Waits for this request's turn (at once while nothing is paced and nobody waits). */
	async acquire(sleep: Sleep, cls: PaceClass): Promise<void> {
		const now = this.clock();
		this.lastUsed = now;
		if (this.idle && now >= this.blockedUntil && now >= this.nextAt) {
			this.grant(now);
			return;
		}
		this.stats.waitedTurns++;
		await new Promise<void>((resolve, reject) => {
			const waiter: Waiter = { priority: PRIORITY[cls], seq: this.seq++, resolve, reject };
			// Sorted by priority, then arrival; a new waiter goes after its equals.
			let at = this.queue.length;
			while (at > 0 && this.queue[at - 1].priority > waiter.priority) at--;
			this.queue.splice(at, 0, waiter);
			if (!this.pumping) void this.pump(sleep);
		});
	}

	/** Hands out turns in order until nobody waits. One pump at a time; it sleeps through the caller's wait. */
	private async pump(sleep: Sleep): Promise<void> {
		this.pumping = true;
		try {
			while (this.queue.length > 0) {
				const now = this.clock();
				const wait = Math.max(this.blockedUntil, this.nextAt) - now;
				if (wait > 0) {
					await sleep(wait);
					continue;
				}
				this.grant(now);
				this.queue.shift()!.resolve();
			}
		} catch (error) {
			// The execution was cancelled: every request still waiting ends the same way.
			for (const waiter of this.queue.splice(0)) waiter.reject(error);
		} finally {
			this.pumping = false;
		}
	}

	private grant(now: number): void {
		this.stats.turns++;
		if (Number.isFinite(this.rate)) this.nextAt = Math.max(this.nextAt, now) + 1000 / this.rate;
	}

	/** Accepted answers per second since the last wait ended, over the window (at least one second). */
	acceptedRate(now = this.clock()): number {
		while (this.answers.length > 0 && this.answers[0] < now - this.tuning.windowMs) this.answers.shift();
		const from = Math.max(now - this.tuning.windowMs, this.measureFrom, this.firstAnswerAt ?? now);
		const count = this.answers.filter((at) => at >= from).length;
		return (count * 1000) / Math.max(1000, now - from);
	}

	/** An answer that was not a 429: the pace recovers a little. */
	onAccepted(): void {
		const now = this.clock();
		this.lastUsed = now;
		this.firstAnswerAt ??= now;
		this.answers.push(now);
		if (this.answers.length > 8192) this.answers.splice(0, this.answers.length - 8192);
		if (Number.isFinite(this.rate)) this.rate += this.tuning.increasePerAnswer;
	}

	/** A 429, and the wait retry.ts decided for it: everyone waits that long; the rate drops once per wait. */
	onLimited(waitMs: number): void {
		const now = this.clock();
		this.lastUsed = now;
		this.firstAnswerAt ??= now;
		this.stats.limited++;
		this.lastLimitedAt = now;
		this.blockedUntil = Math.max(this.blockedUntil, now + waitMs);
		if (now < this.decreaseEpochEnd) return;
		const accepted = Math.max(1, this.acceptedRate(now));
		this.measureFrom = this.blockedUntil;
		this.decreaseEpochEnd = this.blockedUntil + Math.max(1000, 1000 / Math.max(this.rate, this.tuning.minRate));
		this.stats.decreases++;
		this.rate = Math.max(this.tuning.minRate, Math.min(this.rate, accepted) * this.tuning.decrease);
		// The next turn keeps the new spacing from the end of the wait.
		this.nextAt = Math.max(this.nextAt, this.blockedUntil);
	}

	/**
	 * Where in the poll interval a task's polls fall, as a share 0.5–1.5 of the interval for the wait before its second
	 * poll: tasks submitted together spread over a whole interval (golden-ratio sequence) instead of polling in bursts.
	 */
	nextPollPhase(): number {
		const phase = (this.pollPhases++ * 0.6180339887498949) % 1;
		return 0.5 + phase;
	}
}

/** One pacer per execution and credential; dropped when idle for a while (the run is over). */
const pacers = new Map<string, Pacer>();
const IDLE_DROP_MS = 10 * 60_000;
const SWEEP_EVERY_MS = 60_000;
let lastSweep = 0;

function sweep(now: number): void {
	if (now - lastSweep < SWEEP_EVERY_MS) return;
	lastSweep = now;
	for (const [key, pacer] of pacers) if (pacer.idle && now - pacer.lastUsed > IDLE_DROP_MS) pacers.delete(key);
}

/** The pacer of an execution and credential (created on first use). */
export function pacerOf(executionId: string, credential: string, clock: () => number = Date.now): Pacer {
	const now = clock();
	sweep(now);
	const key = `${executionId}\u0000${credential}`;
	let pacer = pacers.get(key);
	if (!pacer) pacers.set(key, (pacer = new Pacer(clock)));
	return pacer;
}
