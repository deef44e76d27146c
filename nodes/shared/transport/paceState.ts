/**
 * What 429s teach about a credential's limit, shared by the Pacers (pacer.ts) of every execution on it in the process:
 * the rate turns are granted at. A service limits a key, so what one 429 teaches holds for every request on it.
 *
 * - Until the first 429 nothing is paced (no queue, no wait).
 * - The first 429 of a burst (nothing paced yet) often comes before the burst's answers: the pace starts at what the
 *   service accepted lately, and each answer of that burst that comes after raises it to what the burst got through,
 *   spread over 1 s plus the burst's length (a full bucket of a second's worth and its refill). A turn is taken before
 *   the node's concurrency gate, so turns granted are not requests sent: only answers count. A burst refused whole
 *   means another process takes from the key (a key nobody used lets one through at least).
 * - A 429 sets the rate to 97% of what the service took: between two refusals (2 s or more apart) a limit's own rate,
 *   however far over it the pace went meanwhile; otherwise the rate accepted lately (answers other than 429 per
 *   second, over the last 3 s, at least 1 s, none of it blocked; at least 1 a second). A 429 of a request sent before
 *   that decrease (the same overshoot) changes nothing.
 * - The refused request waits its own Retry-After (retry.ts decides it), then goes first. The others wait one turn at
 *   the new rate: a token bucket takes them. Refused again soon after a decrease, the service means its wait for
 *   everyone (a window limit) and every request waits it out; and the pace is still over what the service takes: what
 *   the whole 3 s window took, the wait included, at most 30% off per refusal.
 * - After a decrease the pace recovers (each answer adds 0.01 requests/s, doubling per quiet window of 3 s) up to 99.5%
 *   of the limit found. Once two decreases found the limit at the same place (within 10%), the pace holds there: no
 *   creep past it. A limit not known yet is crept past (0.01 per answer); past 1.05 times it, with no 429, it has
 *   moved, and the pace probes.
 * - The probe: 90 answers at the limit found since the last decrease (8 to 40 s; 2 requests/s: 40 s, 10: 9 s), or 30
 *   answers (8 to 10 s) on a key another process uses too, the pace goes past it: each quiet window ×1.25, ×1.5, then
 *   ×2, while the answers keep up, and the increase per answer doubles up to 8 times. What a probe's quiet window took,
 *   less what a full bucket adds (a second's worth over 3 s), is the key's at least: the limit found rises with it. A
 *   429 ends the probe, the limit found at least what its last 3 s took, less that second. So a lone process probes
 *   its limit about once per 90 answers (fake clock, 20, 6, 2 and 1 requests/s: 0.6, 1.1, 1.8 and 3.7% refused, the
 *   start's burst included), and a queue-mode worker whose partner stopped takes the freed share in seconds.
 * - Every kind of limiter (issue 52): a window (a sliding-window log, a fixed window) or GCRA refuses a probe ×1.25 past
 *   it at once, so a probe told nothing and the limit found stayed where a first burst or a bucket's rule put it (89%
 *   of a window's limit). A lone key's probe refused over the limit found remembers that pace (60 s): the next probe
 *   goes halfway to it, and a quiet window kept there whole raises the limit found to it (a window limiter takes a pace
 *   under it whole); then on past it as before. Once the two meet (within 2%) probes go ×1.25 again, only to see the
 *   limit moved. A bucket's reserve can pay for such a window: refused at the hold right after one, the key credits no
 *   more. Refused again within the wait a probe's refusal told, everyone waits for the window to end, once, and the
 *   limit found stays. A start under a third of what the key took later is a deeper bucket, not a share.
 * - The key is shared when a first burst was refused whole, or a limit measured between refusals (from 10 answers at
 *   least) is under 90% of the most measured before (no more than the pace then), or under 70% (not under a third)
 *   of what the start's burst showed (2 accepted at least). Queue-mode workers pace by themselves (n8n gives a node no
 *   shared place but a Data Table, a sub-workflow run per access), so what each finds is its share; one that knows its
 *   key is shared probes three times as often, as its share may free up at any time.
 * - Once the service has taken clearly more than the rate it refused at (1.5 times, over a quiet window), that rate was
 *   no limit (a 429 at low demand): the rate grows ×1.5 per quiet window, up to 1.5 times what was taken, until the
 *   next 429. A token bucket's burst cannot fake it (a second's worth over 3 s is 1.33 times).
 * - After 90 s without a 429 and with nobody waiting, the credential is unpaced again (QUIET_MS says why 90 s).
 * Measured in `npm run bench:pace-model` and test/unit/pacer*.test.ts (fake clock), and `npm run bench:scale`.
 */

/** An execution's Pacer (pacer.ts) as its credential's state sees it while it has requests waiting for a turn. */
export interface Waiting {
	/** Whether its first waiter goes before `other`'s. */
	comesBefore(other: Waiting): boolean;
	/** Its first waiter was granted turn number `turn`. */
	serve(turn: number): void;
}

export interface PacerTuning {
	/** After a 429 the rate is this share of what the service took. */
	decrease: number;
	/** Requests/s added per accepted answer while recovering, probing, or near a limit not known yet. */
	increasePerAnswer: number;
	/** Recovering below this share of the limit found; a known limit's pace holds there. */
	recoverBelow: number;
	/** Past this share of a limit not known yet, with no 429: it moved, the pace probes. */
	boostAbove: number;
	/**
	 * The probe starts after this many answers at the limit found since the last decrease, within
	 * [probeMinMs, probeMaxMs]; on a key another process uses too, `sharedProbeAnswers` within [probeMinMs, sharedProbeMaxMs].
	 */
	probeAnswers: number;
	probeMinMs: number;
	probeMaxMs: number;
	sharedProbeAnswers: number;
	sharedProbeMaxMs: number;
	/** While probing (or recovering), the increase per answer doubles per quiet window, up to this many times. */
	maxBoost: number;
	/** While probing, each quiet window multiplies the rate by 1 + this × that boost (at most ×2). */
	boostGrowth: number;
	/** Shared: a limit measured between refusals under this share of the most measured, or of the start's burst. */
	sharedBelowPeak: number;
	sharedBelowStart: number;
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
 * QUIET_MS, 90 s: well above the longest a credential at its limit goes without a 429 (its probe comes within 40 s),
 * so a busy key never forgets; above n8n's shortest parked Wait (65 s), so a
 * durable wait's next round on the key is still paced; and short against the minutes between scheduled runs, so a
 * slow pace learnt once (a 429 at low demand paces at 0.9 requests/s) does not slow a later run.
 */
const QUIET_MS = 90_000;

/**
 * A probe's refused pace is remembered this long (a lone key probes every 8–40 s): older, the key may have changed
 * since (a worker that did not know it shared the key, whose partner had stopped, went halfway to a pace refused a
 * minute before: the 72-run model's worst 1.34×, 1.26× with this).
 */
const REFUSED_PACE_MS = 60_000;

export const DEFAULT_PACER_TUNING: PacerTuning = {
	decrease: 0.97,
	increasePerAnswer: 0.01,
	recoverBelow: 0.995,
	boostAbove: 1.05,
	probeAnswers: 90,
	probeMinMs: 8000,
	probeMaxMs: 40_000,
	sharedProbeAnswers: 30,
	sharedProbeMaxMs: 10_000,
	maxBoost: 8,
	boostGrowth: 0.25,
	sharedBelowPeak: 0.9,
	sharedBelowStart: 0.7,
	growth: 1.5,
	probeAbove: 1.5,
	quietWindowMs: 3000,
	minRate: 0.2,
	windowMs: 3000,
	quietMs: QUIET_MS,
};

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
	/** When the requests answered within the last 2 s were granted their turns, and whether they were accepted. */
	private answered: Array<{ grantedAt: number; accepted: boolean }> = [];
	/**
	 * After a first 429 (nothing paced before): the burst, every request granted in the second before it (answered ones
	 * granted from `first` to `last`), accepted or refused. What it got through is what the service took.
	 */
	private burst: { from: number; first: number; last: number; accepted: number; refused: number; start: boolean } | undefined;
	/** When this state granted its first turn (a full bucket then), and what the start's burst showed the key takes. */
	private firstGrantAt: number | undefined;
	private startTook = 0;
	/** Another process takes from the key too (a first burst refused whole, or a limit well under the most taken): its
	 * share may free up at any time, so the probe comes sooner. */
	shared = false;
	private peakTook = 0;
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
	/** The increase's multiplier while recovering or probing: doubles per quiet window (1 again near the limit, or after a 429). */
	private boost = 1;
	/** The rate the service refused at (what it accepted when the rate was last lowered, not floored). */
	private refusedAt = 0;
	/**
	 * The pace a lone key's probe was refused at, over the limit found (0: none), and when: the limit lies between the
	 * two, and the next probe goes halfway first (issue 52: a window limiter refuses ×1.25 at once, and the limit found
	 * never rose from what a first burst or a bucket's rule made of it: 89% of a sliding window's limit held).
	 */
	private refusedPace = 0;
	private refusedPaceAt = 0;
	/** The halving found the limit (the two within 2%): later probes go past it as before (×1.25…), to see it moved. */
	private found = false;
	/** This probe kept up halfway: it goes on past it as before (×1.25…; a share another process freed, taken at once). */
	private halfwayKept = false;
	/**
	 * The limit found rose by a probe's kept window since the decrease before the last (`credited`), and a 429 came at
	 * the hold after it: the key has a reserve (a bucket) that paid for such windows, which then say nothing.
	 */
	private credited = 0;
	private reserveSeen = false;
	/** The last decrease was a probe's, refused at a pace over the limit found. */
	private probeRefused = false;
	/** When everyone was last told to wait such a window out: a 429 of a request granted before says nothing more. */
	private windowOutAt = 0;
	/** The time since the last decrease everyone waited for such a window: nothing passes then, so no share is measured in it. */
	private windowOutMs = 0;
	/** The current quiet window began here (the end of the last wait, or the last growth); its accepted answers. */
	private quietFrom = 0;
	private quietAnswers = 0;
	/** Pacers with requests waiting: their pumps share the turns. */
	readonly waiting = new Set<Waiting>();
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
		this.firstGrantAt ??= now;
		if (Number.isFinite(this.rate)) this.nextAt = Math.max(this.nextAt, now) + 1000 / this.rate;
		return ++this.turns;
	}

	/** Grants the next turn to the best waiter of any execution: priority, then served longest ago, then arrival. */
	grantNext(now: number): void {
		let best: Waiting | undefined;
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
		this.answered = [];
		this.burst = undefined;
		this.firstGrantAt = undefined;
		this.startTook = 0;
		this.shared = false;
		this.peakTook = 0;
		this.firstAnswerAt = undefined;
		this.measureFrom = 0;
		this.loweredAt = 0;
		this.acceptedSinceLowered = 0;
		this.grewSinceLowered = false;
		this.lastTook = 0;
		this.known = false;
		this.boost = 1;
		this.refusedAt = 0;
		this.refusedPace = 0;
		this.probeRefused = false;
		this.windowOutAt = 0;
		this.windowOutMs = 0;
		this.halfwayKept = false;
		this.credited = 0;
		this.reserveSeen = false;
		this.found = false;
		this.quietFrom = 0;
		this.quietAnswers = 0;
	}

	/** Accepted answers per second from `from` to `now` (over one second at least). */
	private rateSince(from: number, now: number): number {
		return (this.answers.filter((at) => at >= from).length * 1000) / Math.max(1000, now - from);
	}

	/** Accepted answers per second over the whole window (waits included; at least one second). */
	private throughput(now: number): number {
		return this.rateSince(Math.max(now - this.tuning.windowMs, this.firstAnswerAt ?? now), now);
	}

	/** Accepted answers per second since the last wait ended, over the window (at least one second). */
	acceptedRate(now: number): number {
		while (this.answers.length > 0 && this.answers[0] < now - this.tuning.windowMs) this.answers.shift();
		let from = Math.max(now - this.tuning.windowMs, this.measureFrom, this.firstAnswerAt ?? now);
		// Less than a second since the last decrease says too little: the last second, whatever happened in it.
		if (now - from < 1000) from = Math.max(now - 1000, this.firstAnswerAt ?? now);
		return this.rateSince(from, now);
	}

	/** An answer other than a 429 to a request granted its turn at `grantedAt` (unknown: no burst's answer). */
	onAccepted(now: number, grantedAt?: number): void {
		this.firstAnswerAt ??= now;
		this.answers.push(now);
		if (grantedAt !== undefined) {
			this.noteAnswered(now, grantedAt, true);
			if (grantedAt <= this.loweredAt) this.burstAnswered(grantedAt, true);
		}
		this.acceptedSinceLowered++;
		if (this.answers.length > 8192) this.answers.splice(0, this.answers.length - 8192);
		if (!Number.isFinite(this.rate)) return;
		const zone = this.zone(now);
		// Near a known limit the pace holds (the probe goes past it); a limit not known yet is crept past.
		let raised = this.rate + this.tuning.increasePerAnswer * (zone !== 'near' ? this.boost : this.known ? 0 : 1);
		if (zone === 'above') raised = Math.max(this.rate, Math.min(raised, this.halfway(now)));
		// Recovering towards a known limit stops at its hold (a key with no burst to spare refuses anything past it).
		this.rate = zone === 'below' && this.known ? Math.min(this.lastTook * this.tuning.recoverBelow, raised) : raised;
		// Answers of requests sent before the wait ended do not count towards the window after it.
		if (now >= this.quietFrom) this.quietAnswers++;
		this.grow(now);
	}

	/**
	 * Whether the pace probes past the limit found: a limit not known yet was crept past clearly with no 429, or the pace
	 * held at it for the probe's number of answers since the last decrease. On a key other processes share (queue-mode
	 * workers each pace by themselves) the limit found was only this process's share of it then; another's leaving
	 * makes room that only a probe finds.
	 */
	private beyondLimitFound(now: number): boolean {
		if (this.lastTook <= 0) return false;
		if (this.rate > this.lastTook * this.tuning.boostAbove) return true;
		const { probeAnswers, sharedProbeAnswers, probeMinMs } = this.tuning;
		const answers = this.shared ? sharedProbeAnswers : probeAnswers;
		if (answers <= 0 || this.rate < this.lastTook * this.tuning.recoverBelow) return false;
		const wait = Math.max(probeMinMs, (answers * 1000) / this.lastTook);
		return now - this.loweredAt >= Math.min(this.shared ? this.tuning.sharedProbeMaxMs : this.tuning.probeMaxMs, wait);
	}

	/** Where the pace is against the last limit found: recovering below it, near it (probing), or past it. */
	private zone(now: number): 'below' | 'near' | 'above' {
		if (this.beyondLimitFound(now)) return 'above';
		return this.rate < this.lastTook * this.tuning.recoverBelow ? 'below' : 'near';
	}

	/**
	 * How far a probe goes: halfway from the limit found to the pace refused over it; Infinity with none, once that
	 * half was kept, or once the two are within 2% or the refusal is old (the probe then goes past as before).
	 */
	private halfway(now: number): number {
		if (this.refusedPace === 0) return Infinity;
		if (this.refusedPace > this.lastTook * 1.02 && now - this.refusedPaceAt <= REFUSED_PACE_MS) return this.halfwayKept ? Infinity : (this.lastTook + this.refusedPace) / 2;
		this.found ||= this.refusedPace <= this.lastTook * 1.02;
		this.refusedPace = 0;
		return Infinity;
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
		const zone = this.zone(now);
		if (zone === 'above') {
			// What a quiet window took is the key's at least, less what a full bucket (a second's worth) adds over 3 s.
			// Halfway to a pace refused, a quiet window that kept up with the pace is the key's whole: a window limiter
			// refuses a pace over it at once. Unless a bucket's reserve was seen paying for such a window before.
			const halfway = this.halfway(now);
			const kept = Number.isFinite(halfway) && this.rate >= halfway * 0.99 && taken >= this.rate * 0.97;
			if (kept && !this.reserveSeen) {
				this.lastTook = Math.max(this.lastTook, Math.min(taken, this.rate));
				this.credited = 2;
			}
			this.lastTook = Math.max(this.lastTook, (taken * quietWindowMs) / (quietWindowMs + 1000));
			this.halfwayKept ||= kept;
			const next = Math.min(halfway, Math.min(this.rate, taken) * (1 + Math.min(1, this.tuning.boostGrowth * this.boost)));
			if (taken >= this.rate * 0.9) this.rate = Math.max(this.rate, next);
		}
		this.boost = zone === 'near' ? 1 : Math.min(this.tuning.maxBoost, this.boost * 2);
		this.quietFrom = now;
		this.quietAnswers = 0;
	}

	private noteAnswered(now: number, grantedAt: number, accepted: boolean): void {
		this.answered.push({ grantedAt, accepted });
		while (this.answered.length > 0 && this.answered[0].grantedAt < now - 2000) this.answered.shift();
		if (this.answered.length > 8192) this.answered.splice(0, this.answered.length - 8192);
	}

	/**
	 * What the service took of a first burst: what it got through, which met a full bucket (a second's worth) and its
	 * refill: spread over 1 s plus the burst's length.
	 */
	private burstTook(burst: { first: number; last: number; accepted: number }): number {
		return burst.accepted / (1 + (burst.last - burst.first) / 1000);
	}

	/** An answer of the first burst that came after its first 429: accepted, the burst got one more through. */
	private burstAnswered(grantedAt: number, accepted: boolean): void {
		const burst = this.burst;
		if (!burst || grantedAt <= burst.from) return;
		burst.first = Math.min(burst.first, grantedAt);
		burst.last = Math.max(burst.last, grantedAt);
		if (!accepted) {
			burst.refused++;
			return;
		}
		burst.accepted++;
		const took = this.burstTook(burst);
		if (burst.start && burst.accepted >= 2) this.startTook = Math.max(this.startTook, took);
		if (took <= this.lastTook) return;
		this.lastTook = took;
		this.rate = Math.max(this.rate, took * this.tuning.decrease);
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
		this.noteAnswered(now, grantedAt, false);
		if (grantedAt <= this.loweredAt || grantedAt <= this.windowOutAt) {
			this.burstAnswered(grantedAt, false);
			return false;
		}
		// Refused again within the wait a probe's refusal told: the window the probe filled, refused until it ends (at most
		// that wait after the first refusal) whatever the pace: everyone waits for it, once, and the limit found stays.
		if (this.probeRefused && now - this.loweredAt < waitMs) {
			this.probeRefused = false;
			this.windowOutAt = now;
			this.windowOutMs += Math.max(0, this.loweredAt + waitMs - Math.max(now, this.blockedUntil));
			this.blockedUntil = Math.max(this.blockedUntil, this.loweredAt + waitMs);
			this.measureFrom = this.quietFrom = this.blockedUntil;
			this.nextAt = Math.max(this.nextAt, this.blockedUntil);
			return false;
		}
		// The first burst's answers are in: refused whole, another process takes from the key.
		if (this.burst && this.burst.accepted === 0 && this.burst.refused >= 2) this.shared = true;
		const insists = this.loweredAt > 0 && now - this.loweredAt < 2 * Math.max(waitMs, 1000);
		const accepted = this.acceptedRate(now);
		// What the service took: from one refusal to the next (over 2 s or more) a limit's own rate, however far over
		// it the pace went meanwhile; otherwise what it accepted lately.
		const since = now - this.loweredAt;
		const steady = this.loweredAt > 0 && since >= 2000 && !this.grewSinceLowered;
		// Less than a second since the credential's last wait ended says nothing of what the service takes (found by
		// bench:scale's queue pace case: a worker refused again just after a wait was set to 0.97 requests/s, and its
		// last tasks were fetched at one request a second for 50 s). Refused again that soon, the pace is still over
		// what the service takes: what the whole window took, the wait included, at most 30% off (found by the same
		// case: two workers 2–4 times over the key's limit lost 3% per refusal, and the key alternated a second's wait
		// and a burst for 45 s, two refusals each time).
		const measured = now - this.measureFrom >= 1000 ? accepted : Math.min(this.rate, Math.max(this.rate * 0.7, this.throughput(now)));
		const between = steady ? (this.acceptedSinceLowered * 1000) / since : measured;
		// A first 429 (nothing paced) may come before the burst's answers: those that come after raise the pace to what
		// it got through (found by bench:pace-model: a burst of 8 at 6 requests/s, refused at once, started the pace at
		// 0.97 requests/s and cost the batch 10 s).
		this.burst = undefined;
		if (!Number.isFinite(this.rate)) {
			const from = grantedAt - 1000;
			const sent = this.answered.filter((answer) => answer.grantedAt > from);
			const first = sent.reduce((earliest, answer) => Math.min(earliest, answer.grantedAt), grantedAt);
			const accepted = sent.filter((answer) => answer.accepted).length;
			// It met a full bucket when it was the state's first (a start): what it took then says what the key takes.
			const start = this.firstGrantAt !== undefined && this.firstGrantAt > from;
			this.burst = { from, first, last: grantedAt, accepted, refused: sent.length - accepted, start };
			if (start && accepted >= 2) this.startTook = this.burstTook(this.burst);
		}
		// Refused while probing past the limit found (no 429 while the pace held under it): the limit is at least that one
		// (what the service took since the last refusal is mostly the hold's pace: taken alone, each round would find the
		// limit lower, fake clock, 2 requests/s alone: 96% of it used, not 99%), and at least what the probe's last seconds
		// took, less what a full bucket adds (a second's worth over the window): the one worker left on a key of
		// 2 requests/s found it in 1 probe, not 5.
		const probing = this.zone(now) === 'above';
		const probed = steady && probing ? Math.max(this.lastTook, (accepted * this.tuning.windowMs) / (this.tuning.windowMs + 1000)) : 0;
		const took = Math.min(this.rate, Math.max(1, between, probed, this.burst ? this.burstTook(this.burst) : 0));
		this.known = this.lastTook > 0 && Math.abs(took - this.lastTook) <= 0.1 * this.lastTook;
		// Only limits measured between two refusals, from 10 answers at least, say the key now takes less from this
		// process than it did (one answer in 5 s against one in 2 s is no share that shrank: a key of 0.3 requests/s).
		if (steady && this.acceptedSinceLowered >= 10) {
			// Under a third of the start's is no share but a start that met more than a second's worth: a deeper bucket, or a
			// window of a minute (a bucket of 5 s at 2 requests/s was taken for shared and refused 4% of the time).
			const sent = (this.acceptedSinceLowered * 1000) / Math.max(1000, since - this.windowOutMs);
			const start = sent < this.startTook * this.tuning.sharedBelowStart && sent >= this.startTook / 3;
			if (sent < this.peakTook * this.tuning.sharedBelowPeak || start) this.shared = true;
			// No more than the pace granted since the decrease (it only rose): the rest were answers of requests granted before
			// the bucket ran empty (many lanes of an unpaced start: 31 requests/s on a key of 28, a peak a lone key fell under).
			this.peakTook = Math.max(this.peakTook, Math.min(between, this.rate));
		}
		this.lastTook = took;
		this.boost = 1;
		// A probe refused over what the service took: the limit is under its pace. Not halved towards on a key known
		// shared: a share may free up at any time.
		this.probeRefused = Number.isFinite(this.rate) && this.rate > took && probing;
		if (this.probeRefused && !this.shared && !this.found) {
			this.refusedPace = Math.min(this.refusedPace || Infinity, this.rate);
			this.refusedPaceAt = now;
		}
		this.halfwayKept = false;
		// Refused at the hold right after a kept window raised the limit found: a bucket's reserve paid for that window.
		if (this.credited > 0 && !probing) this.reserveSeen = true;
		this.credited = Math.max(0, this.credited - 1);
		this.refusedAt = Math.min(this.rate, accepted);
		this.rate = Math.max(this.tuning.minRate, took * this.tuning.decrease);
		this.loweredAt = now;
		this.acceptedSinceLowered = 0;
		this.windowOutMs = 0;
		this.grewSinceLowered = false;
		this.blockedUntil = Math.max(this.blockedUntil, now + (insists ? waitMs : Math.min(waitMs, 1000 / this.rate)));
		// Measuring, and the quiet window, start again when the credential may send again.
		this.measureFrom = this.blockedUntil;
		this.quietFrom = this.blockedUntil;
		this.nextAt = Math.max(this.nextAt, this.blockedUntil);
		return true;
	}
}
