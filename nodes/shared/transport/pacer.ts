/**
 * Pacing: one request rate per credential in the process, learnt from the service's 429s (a service limits a key, so
 * what a 429 teaches holds for every execution on it). Part of the transport (every request asks for a turn);
 * *whether* a 429 is retried and how long it waits is still decided by retry.ts alone, the pacer only carries the
 * decision out for every request on the credential at once.
 *
 * - Until the first 429 nothing is paced (no queue, no wait).
 * - A 429 sets the rate just under what the service took: 97% of the lower of the current rate and the rate it
 *   accepted (answers other than 429 per second since the last decrease, over the last 3 s, at least 1 s; counted as
 *   at least 1 a second). How far it falls thus depends on how far over the limit the refused requests went. A 429 of
 *   a request sent before that decrease (in flight at the same overshoot) changes nothing.
 * - The refused request waits its own Retry-After (retry.ts decides it), then goes first. The others wait one turn at
 *   the new rate and go on: a token-bucket service takes them (it refills faster than they come). Only when a request
 *   sent at the new rate is refused again soon after (the service means its wait for everyone, as a window limit
 *   does) does every request on the credential wait out the Retry-After.
 * - Each accepted answer raises the rate by a small constant (additive increase: about 1% a second at saturation), so
 *   near the rate the service refused at the pace creeps back and finds the limit again. Once two decreases in a row
 *   found the limit at the same place (within 10%), it is known: the pace then creeps ten times slower, probing
 *   the limit far less often.
 * - Once the pace is 3% past the last limit found and no 429 came, that limit has moved: the increase doubles per
 *   quiet window, up to 8 times. Queue-mode workers each pace by themselves on a key they share, so what one found
 *   was its share of the limit then; when another stops, its share is free, and the known limit's creep would take
 *   minutes to find it (fake clock, two workers at 10 requests/s: 5.6 requests/s for the one left, now 9.6). At a real
 *   limit the 429 comes before the boost grows much: a lone worker is refused about as often as before (fake clock,
 *   20, 6 and 2 requests/s: 0.1, 0.6 and 1.4%). It cannot even out the shares two workers start with.
 * - Once the service has taken clearly more than the rate it refused at (1.5 times, over a quiet window of 3 s without
 *   a 429), that rate was no limit (a 429 at low demand, or the limit went up): the rate then grows ×1.5 per quiet
 *   window, up to 1.5 times what the service took in it, until the next 429. A token bucket's burst cannot fake it
 *   (a full second's worth spread over 3 s is 1.33 times), so a key at its limit keeps the gentle sawtooth.
 * - After 90 s without a 429 and with nobody waiting, the credential is unpaced again (QUIET_MS says why 90 s).
 * - Each execution has its own Pacer (queue, pump, poll phases, stats) on its credential's PaceState. Turns are
 *   spaced 1/rate across all of them: a pump that wakes grants only if the slot is still free, and then to the best
 *   waiter of any execution on the credential: by priority (a request retried after a 429, then the end of a finished
 *   task such as an artifact list or download, then submissions, then status polls), then the execution served
 *   longest ago, then arrival. So a batch finishes the tasks it has before polling running ones, and executions on
 *   one key take turns. Within a class, the oldest thing goes first: a status poll is as old as its task, so the
 *   task most likely finished is asked first, and a poll of a task just submitted never takes a turn from one that is
 *   done. Between executions a waiter ages: every AGE_TURNS turns granted to others while an execution
 *   waits count as one class better, so another execution's endless submissions cannot starve its polls (served
 *   within AGE_TURNS + 1 turns of a stream of submissions) and its polls cannot starve their submissions either.
 *   Within one execution the order stays strict (its own batch is finite).
 * Sleeping happens only through each execution's cancellable wait (given by the caller): no timers of our own. A
 * cancelled execution's pump rejects its own waiters only.
 */

export type PaceClass = 'retry' | 'finish' | 'submit' | 'poll';

const PRIORITY: Record<PaceClass, number> = { retry: 0, finish: 1, submit: 2, poll: 3 };

/**
 * Turns granted to other executions that make a waiting execution one class better: 4, so that a poll behind another
 * execution's stream of submissions gets every fifth turn (under a second at 6 requests/s), while a short burst of
 * others' submissions still goes first as before.
 */
const AGE_TURNS = 4;

type Sleep = (ms: number) => Promise<void>;

export interface PacerTuning {
	/** After a 429 the rate is this share of what the service took (the lower of the rate and the accepted rate). */
	decrease: number;
	/** Requests/s added per accepted answer (at saturation: this × rate per second). */
	increasePerAnswer: number;
	/** Once the limit is known, the increase is this share of `increasePerAnswer`. */
	knownIncreaseShare: number;
	/**
	 * Past `boostAbove` × the last limit found with no 429, the increase doubles per quiet window, up to `maxBoost`
	 * times: that limit was only this process's share of the key, and the share grew.
	 */
	boostAbove: number;
	maxBoost: number;
	/** Quiet windows: the rate grows this many times when the service took `probeAbove` × the rate it refused at. */
	growth: number;
	probeAbove: number;
	/** A quiet window: this long without a 429 (from the end of the last wait, or the last growth). */
	quietWindowMs: number;
	/** Never slower than this (requests/s). */
	minRate: number;
	/** The accepted rate is measured over this window (at least one second of it, none of it blocked). */
	windowMs: number;
	/** No 429 for this long after the last wait, nobody waiting: unpaced again. */
	quietMs: number;
}

/**
 * QUIET_MS, 90 s: well above the sawtooth of a credential at its limit (from 90% back to the limit at about 1% a
 * second takes ~10 s, then the next 429), so a busy key never forgets; above n8n's shortest parked Wait (65 s), so a
 * durable wait's next round on the key is still paced; and short against the minutes between scheduled runs, so a
 * slow pace learnt once (a 429 at low demand paces at 0.9 requests/s) does not slow a later run.
 */
const QUIET_MS = 90_000;

export const DEFAULT_PACER_TUNING: PacerTuning = {
	decrease: 0.97,
	increasePerAnswer: 0.01,
	knownIncreaseShare: 0.1,
	boostAbove: 1.03,
	maxBoost: 8,
	growth: 1.5,
	probeAbove: 1.5,
	quietWindowMs: 3000,
	minRate: 0.2,
	windowMs: 3000,
	quietMs: QUIET_MS,
};

interface Waiter {
	priority: number;
	/** Within a class, lower goes first: how old what it serves is (epoch ms). */
	age: number;
	seq: number;
	resolve: () => void;
	reject: (error: unknown) => void;
}

/** Whether `waiter` goes before `queued` (of one execution): by class, then age; equals in arrival order. */
const comesLater = (queued: Waiter, waiter: Waiter) =>
	queued.priority > waiter.priority || (queued.priority === waiter.priority && queued.age > waiter.age);

/** What the 429s taught about a credential's limit: shared by the Pacers of every execution on it. */
export class PaceState {
	/** Requests per second allowed now; Infinity until the first 429 (and again after a quiet period). */
	rate = Infinity;
	/** No turn is granted before this (epoch ms): the wait a 429 asked for. */
	blockedUntil = 0;
	/** When the last 429 came (epoch ms; 0 = never): a turn granted before it is stale. */
	lastLimitedAt = 0;
	/** The earliest time of the next turn (spacing 1/rate). */
	nextAt = 0;
	/** Times of accepted answers (not 429) within the window: the rate the service takes. */
	private answers: number[] = [];
	private firstAnswerAt: number | undefined;
	/** Measuring starts again when a wait ends (the time blocked is not sending time). */
	private measureFrom = 0;
	/** When the rate was last lowered: a 429 of a request sent before it changes nothing (the same overshoot). */
	private loweredAt = 0;
	/** Answers accepted since then: between two refusals a limit takes just its rate (its bucket empty at both). */
	private acceptedSinceLowered = 0;
	/** The pace grew by quiet windows since then: it was no limit, and the answers since say nothing of one. */
	private grewSinceLowered = false;
	/** What the service took at the last decrease, and whether the two last decreases agreed on it (a known limit). */
	private lastTook = 0;
	private known = false;
	/** The increase's multiplier past the last limit found (1 until then, and again after each 429). */
	private boost = 1;
	/** The rate the service refused at (what it accepted when the rate was last lowered, not floored). */
	private refusedAt = 0;
	/** The current quiet window began here (the end of the last wait, or the last growth); its accepted answers. */
	private quietFrom = 0;
	private quietAnswers = 0;
	/** Pacers with requests waiting: their pumps share the turns. */
	readonly waiting = new Set<Pacer>();
	/** Turns granted (to order executions by when they were served last) and waiters queued (arrival order). */
	turns = 0;
	seq = 0;

	constructor(readonly tuning: PacerTuning = DEFAULT_PACER_TUNING) {}

	/** How long until the next turn may be granted (≤ 0: now). */
	waitMs(now: number): number {
		return Math.max(this.blockedUntil, this.nextAt) - now;
	}

	/** A turn was granted at `now`: the next one is 1/rate later. */
	take(now: number): number {
		if (Number.isFinite(this.rate)) this.nextAt = Math.max(this.nextAt, now) + 1000 / this.rate;
		return ++this.turns;
	}

	/** Grants the next turn to the best waiter of any execution: priority, then served longest ago, then arrival. */
	grantNext(now: number): void {
		let best: Pacer | undefined;
		for (const pacer of this.waiting) if (!best || pacer.comesBefore(best)) best = pacer;
		best?.serve(this.take(now));
	}

	/** Unpaced again after a quiet period with nobody waiting: old knowledge does not slow later runs for ever. */
	settle(now: number): void {
		if (!Number.isFinite(this.rate) || this.waiting.size > 0) return;
		if (now - Math.max(this.lastLimitedAt, this.blockedUntil) < this.tuning.quietMs) return;
		this.rate = Infinity;
		this.nextAt = 0;
		this.answers = [];
		this.firstAnswerAt = undefined;
		this.measureFrom = 0;
		this.loweredAt = 0;
		this.acceptedSinceLowered = 0;
		this.grewSinceLowered = false;
		this.lastTook = 0;
		this.known = false;
		this.boost = 1;
		this.refusedAt = 0;
		this.quietFrom = 0;
		this.quietAnswers = 0;
	}

	/** Accepted answers per second since the last wait ended, over the window (at least one second). */
	acceptedRate(now: number): number {
		while (this.answers.length > 0 && this.answers[0] < now - this.tuning.windowMs) this.answers.shift();
		let from = Math.max(now - this.tuning.windowMs, this.measureFrom, this.firstAnswerAt ?? now);
		// Less than a second since the last decrease says too little: the last second, whatever happened in it.
		if (now - from < 1000) from = Math.max(now - 1000, this.firstAnswerAt ?? now);
		const count = this.answers.filter((at) => at >= from).length;
		return (count * 1000) / Math.max(1000, now - from);
	}

	onAccepted(now: number): void {
		this.firstAnswerAt ??= now;
		this.answers.push(now);
		this.acceptedSinceLowered++;
		if (this.answers.length > 8192) this.answers.splice(0, this.answers.length - 8192);
		if (!Number.isFinite(this.rate)) return;
		const share = this.beyondLimitFound() ? this.boost : this.known ? this.tuning.knownIncreaseShare : 1;
		this.rate += this.tuning.increasePerAnswer * share;
		// Answers of requests sent before the wait ended do not count towards the window after it.
		if (now >= this.quietFrom) this.quietAnswers++;
		this.grow(now);
	}

	/**
	 * Whether the pace went clearly past the last limit the service showed, and no 429 came: on a key that other
	 * processes share (queue-mode workers each pace by themselves), the limit found was only this process's share of
	 * it then, and another's leaving made room.
	 */
	private beyondLimitFound(): boolean {
		return this.lastTook > 0 && this.rate > this.lastTook * this.tuning.boostAbove;
	}

	/**
	 * At the end of a quiet window: when the service took `probeAbove` × the rate it refused at, that was no limit and
	 * the rate grows `growth` times (up to `growth` × what was taken: a pace nobody uses does not grow for ever).
	 */
	private grow(now: number): void {
		const { quietWindowMs, probeAbove, growth } = this.tuning;
		if (now < this.quietFrom + quietWindowMs) return;
		const taken = (this.quietAnswers * 1000) / (now - this.quietFrom);
		if (taken >= this.refusedAt * probeAbove) {
			this.rate = Math.max(this.rate, Math.min(this.rate, taken) * growth);
			this.grewSinceLowered = true;
		}
		if (this.beyondLimitFound()) this.boost = Math.min(this.tuning.maxBoost, this.boost * 2);
		this.quietFrom = now;
		this.quietAnswers = 0;
	}

	/**
	 * A 429 for a request granted its turn at `grantedAt`. Returns whether the rate was lowered: not for a request sent
	 * before the last decrease. The credential waits one turn at the new rate, or, refused again at that rate soon
	 * after a decrease, the whole `waitMs`.
	 */
	onLimited(now: number, waitMs: number, grantedAt: number = now): boolean {
		this.firstAnswerAt ??= now;
		this.lastLimitedAt = now;
		this.quietAnswers = 0;
		if (grantedAt <= this.loweredAt) return false;
		const insists = this.loweredAt > 0 && now - this.loweredAt < 2 * Math.max(waitMs, 1000);
		const accepted = this.acceptedRate(now);
		// What the service took: from one refusal to the next (over 2 s or more) a limit's own rate, however far over
		// it the pace went meanwhile; otherwise what it accepted lately.
		const since = now - this.loweredAt;
		const steady = this.loweredAt > 0 && since >= 2000 && !this.grewSinceLowered;
		// Less than a second since the credential's last wait ended says nothing of what the service takes (found by
		// bench:scale's queue pace case: a worker refused again just after a wait was set to 0.97 requests/s, and its
		// last tasks were fetched at one request a second for 50 s): the rate, lowered once more.
		const measured = now - this.measureFrom >= 1000 ? accepted : this.rate;
		const between = steady ? (this.acceptedSinceLowered * 1000) / since : measured;
		const took = Math.min(this.rate, Math.max(1, between));
		this.known = this.lastTook > 0 && Math.abs(took - this.lastTook) <= 0.1 * this.lastTook;
		this.lastTook = took;
		this.boost = 1;
		this.refusedAt = Math.min(this.rate, accepted);
		this.rate = Math.max(this.tuning.minRate, took * this.tuning.decrease);
		this.loweredAt = now;
		this.acceptedSinceLowered = 0;
		this.grewSinceLowered = false;
		this.blockedUntil = Math.max(this.blockedUntil, now + (insists ? waitMs : Math.min(waitMs, 1000 / this.rate)));
		// Measuring, and the quiet window, start again when the credential may send again.
		this.measureFrom = this.blockedUntil;
		this.quietFrom = this.blockedUntil;
		this.nextAt = Math.max(this.nextAt, this.blockedUntil);
		return true;
	}
}

/** One execution's requests on one credential: its queue and pump, on the credential's PaceState. */
export class Pacer {
	private queue: Waiter[] = [];
	private pumping = false;
	private pollPhases = 0;
	/** The credential's turn count when this execution was last served (0 = never). */
	private servedAt = 0;
	/** The credential's turn count when this execution's wait began, or it was last served while waiting. */
	private waitFrom = 0;
	lastUsed: number;
	/** Counters (for logs and tests). */
	readonly stats = { turns: 0, waitedTurns: 0, limited: 0, decreases: 0 };

	/** Without a shared state, a private one (one execution alone on its credential). */
	constructor(
		private readonly clock: () => number = Date.now,
		tuning: PacerTuning = DEFAULT_PACER_TUNING,
		readonly state: PaceState = new PaceState(tuning),
	) {
		this.lastUsed = clock();
	}

	/** Requests per second allowed now on the credential; Infinity while unpaced. */
	get rate(): number {
		return this.state.rate;
	}

	get blockedUntil(): number {
		return this.state.blockedUntil;
	}

	get idle(): boolean {
		return this.queue.length === 0 && !this.pumping;
	}

	/** Whether a turn granted at `grantedAt` still holds: no 429 came since (else the request asks again). */
	turnHolds(grantedAt: number): boolean {
		return this.state.lastLimitedAt < grantedAt;
	}

	/**
	 * Waits for this request's turn (at once while nothing is paced and nobody on the credential waits). `age`: how old
	 * what it serves is (epoch ms; a poll: its task's submission), its place within its class; default now.
	 */
	async acquire(sleep: Sleep, cls: PaceClass, age?: number): Promise<void> {
		const now = this.clock();
		this.lastUsed = now;
		const state = this.state;
		state.settle(now);
		if (state.waiting.size === 0 && state.waitMs(now) <= 0) {
			this.stats.turns++;
			this.servedAt = state.take(now);
			return;
		}
		this.stats.waitedTurns++;
		await new Promise<void>((resolve, reject) => {
			const waiter: Waiter = { priority: PRIORITY[cls], age: age ?? now, seq: state.seq++, resolve, reject };
			// Sorted by priority, then age, then arrival; a new waiter goes after its equals.
			let at = this.queue.length;
			while (at > 0 && comesLater(this.queue[at - 1], waiter)) at--;
			if (this.queue.length === 0) this.waitFrom = state.turns;
			this.queue.splice(at, 0, waiter);
			state.waiting.add(this);
			if (!this.pumping) void this.pump(sleep);
		});
	}

	/**
	 * Hands out turns until this execution has nobody waiting. One pump per execution, sleeping through its wait;
	 * pumps of other executions on the credential may be due at the same time: whoever wakes first grants the turn
	 * (to the best waiter of any of them), the others find the slot taken and sleep on.
	 */
	private async pump(sleep: Sleep): Promise<void> {
		this.pumping = true;
		try {
			while (this.queue.length > 0) {
				const now = this.clock();
				const wait = this.state.waitMs(now);
				if (wait > 0) {
					await sleep(wait);
					continue;
				}
				this.state.grantNext(now);
			}
		} catch (error) {
			// The execution was cancelled: every request of it still waiting ends the same way (others' are not its).
			this.state.waiting.delete(this);
			for (const waiter of this.queue.splice(0)) waiter.reject(error);
		} finally {
			this.pumping = false;
		}
	}

	/**
	 * Whether this execution's first waiter goes before `other`'s: by class, one class better per AGE_TURNS turns the
	 * execution has waited (ageing), then served longest ago, then arrival.
	 */
	comesBefore(other: Pacer): boolean {
		const [mine, theirs] = [this.rank(), other.rank()];
		if (mine !== theirs) return mine < theirs;
		if (this.servedAt !== other.servedAt) return this.servedAt < other.servedAt;
		return this.queue[0].seq < other.queue[0].seq;
	}

	/** The first waiter's class in turns, less the turns this execution has waited (lower goes first). */
	private rank(): number {
		return this.queue[0].priority * AGE_TURNS - (this.state.turns - this.waitFrom);
	}

	/** The credential granted this execution's first waiter turn number `turn`. */
	serve(turn: number): void {
		const waiter = this.queue.shift()!;
		if (this.queue.length === 0) this.state.waiting.delete(this);
		this.stats.turns++;
		this.servedAt = turn;
		this.waitFrom = turn;
		waiter.resolve();
	}

	/** An answer that was not a 429: the pace recovers a little. */
	onAccepted(): void {
		const now = this.clock();
		this.lastUsed = now;
		this.state.onAccepted(now);
	}

	/**
	 * A 429, the wait retry.ts decided for it (the refused request waits it itself), and when the request's turn was
	 * granted: the rate drops, once per overshoot (PaceState.onLimited).
	 */
	onLimited(waitMs: number, grantedAt?: number): void {
		const now = this.clock();
		this.lastUsed = now;
		this.stats.limited++;
		if (this.state.onLimited(now, waitMs, grantedAt)) this.stats.decreases++;
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

/** One pacer per execution and credential, dropped when idle for a while (the run is over); one state per credential. */
const pacers = new Map<string, Pacer>();
const states = new Map<string, PaceState>();
const IDLE_DROP_MS = 10 * 60_000;
const SWEEP_EVERY_MS = 60_000;
let lastSweep = 0;

/** Drops idle pacers, then the states no pacer uses any more. */
function sweep(now: number): void {
	if (now - lastSweep < SWEEP_EVERY_MS) return;
	lastSweep = now;
	for (const [key, pacer] of pacers) if (pacer.idle && now - pacer.lastUsed > IDLE_DROP_MS) pacers.delete(key);
	const used = new Set([...pacers.values()].map((pacer) => pacer.state));
	for (const [key, state] of states) if (!used.has(state) && state.waiting.size === 0) states.delete(key);
}

/** The pacer of an execution and credential (created on first use), on the credential's shared state. */
export function pacerOf(executionId: string, credential: string, clock: () => number = Date.now): Pacer {
	const now = clock();
	sweep(now);
	const key = `${executionId}\u0000${credential}`;
	let pacer = pacers.get(key);
	if (!pacer) {
		let state = states.get(credential);
		if (!state) states.set(credential, (state = new PaceState()));
		pacers.set(key, (pacer = new Pacer(clock, DEFAULT_PACER_TUNING, state)));
	}
	return pacer;
}
