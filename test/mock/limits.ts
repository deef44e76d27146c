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

/** Reads the knobs from an environment (unset/invalid = no limit). */
export function limitsFromEnv(env: NodeJS.ProcessEnv): MockLimits {
	const rate = Number(env.MOCK_RATE_LIMIT ?? 0);
	const faults = Number(env.MOCK_READ_FAULT_RATE ?? 0);
	return {
		rateLimit: Number.isFinite(rate) && rate > 0 ? rate : 0,
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
 * A token bucket per key: `rateLimit` tokens a second, at most one second's worth stored. A refused request takes
 * no token (it did no work), so a client that waits `Retry-After` gets through.
 */
export class RateLimiter {
	private buckets = new Map<string, { tokens: number; at: number }>();

	/** undefined = allowed; otherwise the whole seconds to send as `Retry-After`. */
	take(label: string, rate: number, now = Date.now()): number | undefined {
		if (!(rate > 0)) return undefined;
		const capacity = Math.max(1, rate);
		const bucket = this.buckets.get(label) ?? { tokens: capacity, at: now };
		bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * rate);
		bucket.at = now;
		this.buckets.set(label, bucket);
		if (bucket.tokens >= 1) {
			bucket.tokens -= 1;
			return undefined;
		}
		return Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
	}

	clear(): void {
		this.buckets.clear();
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
