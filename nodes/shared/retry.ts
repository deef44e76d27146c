/**
 * When and how long to wait before trying a request again. Pure functions: the transport decides *whether* a request
 * may be retried at all (a paid submission with an unknown outcome never is); this module only says *when*.
 */

export interface RetryPolicy {
	/** Attempts in all, the first one included. */
	maxAttempts: number;
	/** First backoff step; each further step doubles it. */
	baseDelayMs: number;
	/** No single wait is longer than this (a longer Retry-After ends the retries instead). */
	maxDelayMs: number;
	/** Retrying stops once this much time has passed since the first attempt. */
	maxTotalMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxAttempts: 6,
	baseDelayMs: 500,
	maxDelayMs: 30_000,
	maxTotalMs: 120_000,
};

/** 429 (rate), 502/503 (upstream or overload, section 7), 504 (a gateway timing out says the same). */
export const RETRYABLE_STATUSES: readonly number[] = [429, 502, 503, 504];

export function isRetryableStatus(status: number): boolean {
	return RETRYABLE_STATUSES.includes(status);
}

/** `Retry-After` is either delta-seconds or an HTTP date; returns milliseconds, or undefined when absent/unreadable. */
export function parseRetryAfter(value: unknown, nowMs: number = Date.now()): number | undefined {
	const raw = Array.isArray(value) ? value[0] : value;
	if (typeof raw === 'number' && Number.isFinite(raw) && raw >= 0) return raw * 1000;
	if (typeof raw !== 'string' || raw.trim() === '') return undefined;
	const text = raw.trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
	const date = Date.parse(text);
	if (Number.isNaN(date)) return undefined;
	return Math.max(0, date - nowMs);
}

/** Exponential backoff with jitter: a wait between half and all of base × 2^(attempt-1), capped. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
	const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
	return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export interface RetryDecisionInput {
	/** The attempt that just failed (1 for the first). */
	attempt: number;
	elapsedMs: number;
	retryAfterMs?: number;
	policy: RetryPolicy;
	random?: () => number;
}

/** How long to wait before the next attempt, or undefined when the budget (attempts, time) is spent. */
export function nextRetryDelay(input: RetryDecisionInput): number | undefined {
	const { attempt, elapsedMs, retryAfterMs, policy } = input;
	if (attempt >= policy.maxAttempts) return undefined;
	let delay = backoffDelay(attempt, policy, input.random);
	if (retryAfterMs !== undefined) {
		// The server said when; asking earlier only burns rate limit.
		if (retryAfterMs > policy.maxDelayMs) return undefined;
		delay = Math.max(delay, retryAfterMs);
	}
	if (elapsedMs + delay > policy.maxTotalMs) return undefined;
	return delay;
}
