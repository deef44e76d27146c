/**
 * Service-wide limits of the mock, like a real service's gateway: a request rate per API key (429 with a whole-second
 * `Retry-After` past it), task durations spread over a range, and occasional faults on reads. Counted per key.
 * Also whether submitted loopback media URLs are fetched (`fetchMedia`). Knobs: env `MOCK_RATE_LIMIT`,
 * `MOCK_TASK_SECONDS`, `MOCK_READ_FAULT_RATE`, `MOCK_FETCH_MEDIA` (cli.ts), `limits` in the start options, or
 * `POST /__mock/limits` at run time. See README.md.
 */
import { createHash } from 'crypto';

export interface MockLimits {
	/** Requests per second per API key; 0 = unlimited. Burst: one second's worth. */
	rateLimit: number;
	/** The limiter's kind (LIMITER_KINDS): for every key, unless `keyLimiters` names the key's label; default 'bucket'. */
	limiter?: LimiterKind;
	keyLimiters?: Record<string, LimiterKind>;
	/** Task duration (queued + running) drawn uniformly from [min, max] seconds; unset = the task script's timings. */
	taskSeconds?: [number, number];
	/** Share 0..1 of GET requests under /v1 answered 503 or with a dropped connection (half each). */
	readFaultRate: number;
	/** 'loopback' (default): a submission's loopback frame/reference URLs are fetched (fetchMedia.ts); 'off': never. */
	fetchMedia: 'loopback' | 'off';
}

export const NO_LIMITS: MockLimits = { rateLimit: 0, readFaultRate: 0, fetchMedia: 'loopback' };

export interface KeyStats {
	/** Requests under /v1 presented with this key (including the 429s and the faulted reads). */
	requests: number;
	/** Requests answered 429 by the rate limit. */
	limited: number;
	/** Tasks created with this key (including accepted-then-cut). */
	submissions: number;
	/** Reads answered 503 or cut by `readFaultRate`. */
	readFaults: number;
}

/** The label a key's stats are filed under: the first 12 hex digits of its sha256 (the key itself is never shown). */
export function keyLabel(key: string): string {
	return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** `"50-70"`, `"1.5-3"` or `"60"` → [min, max] seconds; undefined for empty or invalid text. */
export function parseSecondsRange(text: string | undefined): [number, number] | undefined {
	if (!text || !text.trim()) return undefined;
	const m = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?))?\s*$/.exec(text);
	if (!m) return undefined;
	const min = Number(m[1]);
	const max = m[2] === undefined ? min : Number(m[2]);
	return max >= min ? [min, max] : undefined;
}

/** The limiter kind of a key (its label): its own, else the limits' default, else the token bucket. */
export function limiterKindOf(limits: MockLimits, label: string): LimiterKind {
	return limits.keyLimiters?.[label] ?? limits.limiter ?? 'bucket';
}

/** Reads the knobs from an environment (unset/invalid = no limit). */
export function limitsFromEnv(env: NodeJS.ProcessEnv): MockLimits {
	const rate = Number(env.MOCK_RATE_LIMIT ?? 0);
	const faults = Number(env.MOCK_READ_FAULT_RATE ?? 0);
	const kind = env.MOCK_LIMITER?.trim();
	return {
		rateLimit: Number.isFinite(rate) && rate > 0 ? rate : 0,
		...(isLimiterKind(kind) ? { limiter: kind } : {}),
		taskSeconds: parseSecondsRange(env.MOCK_TASK_SECONDS),
		readFaultRate: Number.isFinite(faults) ? Math.min(1, Math.max(0, faults)) : 0,
		fetchMedia: env.MOCK_FETCH_MEDIA?.trim().toLowerCase() === 'off' ? 'off' : 'loopback',
	};
}

/** Validates an admin body (partial limits); returns the merged limits or an error message. */
export function mergeLimits(current: MockLimits, input: unknown): MockLimits | string {
	if (!input || typeof input !== 'object') return 'body: expected an object';
	const src = input as Record<string, unknown>;
	const next: MockLimits = { ...current };
	if ('rateLimit' in src) {
		if (typeof src.rateLimit !== 'number' || !(src.rateLimit >= 0)) return 'rateLimit: a number >= 0';
		next.rateLimit = src.rateLimit;
	}
	if ('limiter' in src) {
		if (!isLimiterKind(src.limiter)) return `limiter: one of ${LIMITER_KINDS.join(', ')}`;
		next.limiter = src.limiter;
	}
	if ('keyLimiters' in src) {
		const map = src.keyLimiters;
		if (map === null) next.keyLimiters = undefined;
		else if (!map || typeof map !== 'object' || !Object.values(map).every(isLimiterKind))
			return `keyLimiters: {<key label>: one of ${LIMITER_KINDS.join(', ')}}, or null`;
		else next.keyLimiters = { ...(map as Record<string, LimiterKind>) };
	}
	if ('readFaultRate' in src) {
		const r = src.readFaultRate;
		if (typeof r !== 'number' || !(r >= 0 && r <= 1)) return 'readFaultRate: a number in 0..1';
		next.readFaultRate = r;
	}
	if ('fetchMedia' in src) {
		if (src.fetchMedia !== 'loopback' && src.fetchMedia !== 'off') return "fetchMedia: 'loopback' or 'off'";
		next.fetchMedia = src.fetchMedia;
	}
	if ('taskSeconds' in src) {
		const t = src.taskSeconds;
		if (t === null) next.taskSeconds = undefined;
		else {
			const range =
				typeof t === 'string' ? parseSecondsRange(t) : Array.isArray(t) ? parseSecondsRange(t.join('-')) : undefined;
			if (!range) return 'taskSeconds: "MIN-MAX" seconds, [min, max], or null';
			next.taskSeconds = range;
		}
	}
	return next;
}

/**
 * The kinds of limiter gateways run (issue 52), each at `rate` requests/s for one key; `take` answers undefined
 * (allowed) or the whole seconds to send as `Retry-After`. A refused request counts for nothing in any of them.
 * - `bucket`: a token bucket holding a second's worth (one token at least), the default; `bucket-5s`: five seconds' worth.
 * - `log-ms`: a sliding-window log, at most rate × 1 s requests in any 1 s (millisecond timestamps).
 * - `log-s`: the same with whole-second timestamps (new-api's in-memory limiter, common/rate-limit.go): in effect at
 *   most that many requests in each calendar second.
 * - `window-1s`, `window-60s`: a fixed window, a counter of rate × 1 s (60 s) reset at each second (minute).
 * - `gcra`: GCRA (a leaky bucket as a meter): one request per 1/rate, a tolerance of one interval (a burst of two).
 * A window holds rate × its length requests, one at least: under 1 request/s its length grows to hold one (0.5/s: 2 s).
 */
export const LIMITER_KINDS = ['bucket', 'bucket-5s', 'log-ms', 'log-s', 'window-1s', 'window-60s', 'gcra'] as const;
export type LimiterKind = (typeof LIMITER_KINDS)[number];

export interface Limiter {
	take(now: number): number | undefined;
}

/** A limiter whose rate may change from one request to the next (the mock's `POST /__mock/limits`). */
type RatedLimiter = (now: number, rate: number) => number | undefined;

/** A window of `seconds` at `rate`: how many requests it holds (one at least) and its length then (ms). */
function windowOf(rate: number, seconds: number): { count: number; ms: number } {
	const count = Math.max(1, Math.round(rate * seconds));
	return { count, ms: Math.max(seconds * 1000, Math.round((count * 1000) / rate)) };
}

const retryAfter = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function tokenBucket(burstSeconds: number): RatedLimiter {
	let tokens: number | undefined;
	let at: number | undefined;
	return (now, rate) => {
		const capacity = Math.max(1, rate * burstSeconds);
		tokens = Math.min(capacity, (tokens ?? capacity) + ((now - (at ?? now)) / 1000) * rate);
		at = now;
		if (tokens >= 1) {
			tokens -= 1;
			return undefined;
		}
		return Math.max(1, Math.ceil((1 - tokens) / rate));
	};
}

function slidingLog(wholeSeconds: boolean): RatedLimiter {
	const times: number[] = [];
	return (now, rate) => {
		const { count, ms } = windowOf(rate, 1);
		if (wholeSeconds) {
			// new-api: a queue of whole-second times; a request passes while the queue is short or its oldest is a window old.
			const [second, seconds] = [Math.floor(now / 1000), Math.round(ms / 1000)];
			if (times.length >= count && second - times[0] < seconds) return Math.max(1, times[0] + seconds - second);
			if (times.length >= count) times.shift();
			times.push(second);
			return undefined;
		}
		while (times.length > 0 && times[0] <= now - ms) times.shift();
		if (times.length >= count) return retryAfter(times[0] + ms - now);
		times.push(now);
		return undefined;
	};
}

function fixedWindow(seconds: number): RatedLimiter {
	let index = -1;
	let used = 0;
	return (now, rate) => {
		const { count, ms } = windowOf(rate, seconds);
		const current = Math.floor(now / ms);
		if (current !== index) [index, used] = [current, 0];
		if (used >= count) return retryAfter((current + 1) * ms - now);
		used++;
		return undefined;
	};
}

function gcra(): RatedLimiter {
	let due = -Infinity;
	return (now, rate) => {
		const interval = 1000 / rate;
		if (now < due - interval) return retryAfter(due - interval - now);
		due = Math.max(due, now) + interval;
		return undefined;
	};
}

function ratedLimiter(kind: LimiterKind): RatedLimiter {
	switch (kind) {
		case 'bucket':
			return tokenBucket(1);
		case 'bucket-5s':
			return tokenBucket(5);
		case 'log-ms':
			return slidingLog(false);
		case 'log-s':
			return slidingLog(true);
		case 'window-1s':
			return fixedWindow(1);
		case 'window-60s':
			return fixedWindow(60);
		case 'gcra':
			return gcra();
	}
}

/** A limiter of `kind` at `rate` requests/s (a window's count and length from it, windowOf). */
export function makeLimiter(kind: LimiterKind, rate: number): Limiter {
	const take = ratedLimiter(kind);
	return { take: (now) => take(now, rate) };
}

export const isLimiterKind = (value: unknown): value is LimiterKind => LIMITER_KINDS.includes(value as LimiterKind);

/**
 * A limiter per key: `rateLimit` requests/s, of the key's kind (`limiter` of the limits, `keyLimiters` by key label),
 * the token bucket by default. A rate changed at run time applies to the key's limiter as it is; a kind changed starts
 * it afresh.
 */
export class RateLimiter {
	private limiters = new Map<string, { kind: LimiterKind; take: RatedLimiter }>();

	/** undefined = allowed; otherwise the whole seconds to send as `Retry-After`. */
	take(label: string, rate: number, now = Date.now(), kind: LimiterKind = 'bucket'): number | undefined {
		if (!(rate > 0)) return undefined;
		let entry = this.limiters.get(label);
		if (!entry || entry.kind !== kind) this.limiters.set(label, (entry = { kind, take: ratedLimiter(kind) }));
		return entry.take(now, rate);
	}

	clear(): void {
		this.limiters.clear();
	}
}

export function emptyStats(): KeyStats {
	return { requests: 0, limited: 0, submissions: 0, readFaults: 0 };
}

/** A task duration in ms from the range (uniform), split 10% queued / 90% running. */
export function drawTaskTimings(range: [number, number], random = Math.random): { queuedMs: number; runMs: number } {
	const totalMs = Math.round((range[0] + (range[1] - range[0]) * random()) * 1000);
	const queuedMs = Math.round(totalMs * 0.1);
	return { queuedMs, runMs: totalMs - queuedMs };
}
