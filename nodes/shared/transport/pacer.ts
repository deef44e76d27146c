/**
 * Pacing: every request on a credential asks for a turn, granted at the credential's rate (paceState.ts says how the
 * rate is learnt from 429s). Part of the transport; *whether* a 429 is retried and how long it waits is still decided
 * by retry.ts alone, the pacer only carries the decision out for every request on the credential at once.
 *
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
import { DEFAULT_PACER_TUNING, PaceState, type PacerTuning, type Waiting } from './paceState';

export { DEFAULT_PACER_TUNING, PaceState, type PacerTuning } from './paceState';

export type PaceClass = 'retry' | 'finish' | 'submit' | 'poll';

const PRIORITY: Record<PaceClass, number> = { retry: 0, finish: 1, submit: 2, poll: 3 };

/**
 * Turns granted to other executions that make a waiting execution one class better: 4, so that a poll behind another
 * execution's stream of submissions gets every fifth turn (under a second at 6 requests/s), while a short burst of
 * others' submissions still goes first as before.
 */
const AGE_TURNS = 4;

type Sleep = (ms: number) => Promise<void>;

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

/** One execution's requests on one credential: its queue and pump, on the credential's PaceState. */
export class Pacer implements Waiting {
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

	/** An answer that was not a 429, to a request granted its turn at `grantedAt` (PaceState.onAccepted). */
	onAccepted(grantedAt?: number): void {
		const now = this.clock();
		this.lastUsed = now;
		this.state.onAccepted(now, grantedAt);
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
