import { isOutcomeUnknownError } from './errors';

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
	/**
	 * A 429 (rate limited: nothing was done) is waited out, however often it comes, for this long after the first
	 * attempt (or until the request's own deadline, e.g. an item's Max Wait): it does not use up the attempts above.
	 */
	maxRateLimitedMs?: number;
	/** At most this many 429s in a row are waited out (the Chat Model's Maximum Retries); unset: until the deadline. */
	maxRateLimitedRetries?: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxAttempts: 6,
	baseDelayMs: 500,
	maxDelayMs: 30_000,
	maxTotalMs: 120_000,
	maxRateLimitedMs: 30 * 60_000,
};

/**
 * THE rule for answers, written once (README "Never paying twice by accident" and docs/reliability.md say the same).
 *
 * A paid POST (video submit, chat completion, response, image generation; kind 'submit'):
 * - 2xx with a readable body: accepted.
 * - 429, 502, 503: the service said no and created nothing (docs/service-interface.md §7): retried with backoff
 *   (a Retry-After is honoured); once the retries are spent, a refusal.
 * - any other 4xx (400, 401, 403, 404, 409, 422, ...): a refusal, nothing created, not retried.
 * - 500, 504 and any other 5xx (or a status outside 2xx/4xx/5xx): the outcome is unknown (the service, or a gateway
 *   in front of it, failed after the request arrived and may have created the work): never resent.
 * - a 2xx whose body cannot be read, or a connection that fails after the request went out (reset, timeout): unknown,
 *   never resent.
 * - a connection that was never made (refused, no DNS, unreachable; NOT_SENT_CODES): nothing was sent, retried. A
 *   failed TLS handshake also proves nothing was sent, but fails the same way again: not retried.
 * A read (status, artifacts, downloads, the model list): 429/502/503/504 and network failures are retried; any other
 * non-2xx answer is an error.
 */
type RequestKind = 'read' | 'submit';

type AnswerVerdict = 'accepted' | 'retry' | 'refused' | 'unknown';

/** Statuses retried with backoff: for a paid POST, the service's "no, try later" (nothing was created). */
const SUBMIT_RETRY_STATUSES: readonly number[] = [429, 502, 503];
/** A read is safe to repeat: a gateway timing out (504) is retried too. */
const READ_RETRY_STATUSES: readonly number[] = [...SUBMIT_RETRY_STATUSES, 504];

export function answerVerdict(kind: RequestKind, status: number): AnswerVerdict {
	if (status >= 200 && status < 300) return 'accepted';
	if ((kind === 'submit' ? SUBMIT_RETRY_STATUSES : READ_RETRY_STATUSES).includes(status)) return 'retry';
	if (kind === 'read' || (status >= 400 && status < 500)) return 'refused';
	return 'unknown';
}

/** Network failures that prove the request never left: nothing can have been accepted, so it may be sent again. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'ERR_INVALID_URL',
]);

/**
 * Redirects that lead nowhere usable (a loop or a longer chain than a read follows, a target that is not http(s)):
 * the same answer comes again, so they end at once instead of being retried as an outage (with the key, each time).
 */
const REDIRECT_FAILURE_CODES: ReadonlySet<string> = new Set([
	'ERR_FR_TOO_MANY_REDIRECTS',
	'ERR_FR_REDIRECTION_FAILURE',
]);

/**
 * A failed connection: retried when nothing was sent or for a read; for a paid POST otherwise unknown; a redirect
 * failure of a read is final (a paid POST never follows one).
 */
export function failureVerdict(kind: RequestKind, code: string): 'retry' | 'unknown' | 'final' {
	if (REDIRECT_FAILURE_CODES.has(code)) return kind === 'read' ? 'final' : 'unknown';
	if (NOT_SENT_CODES.has(code) || kind === 'read') return 'retry';
	return 'unknown';
}

/** A paid request whose outcome is unknown is never sent again (the submission guard asks this). */
export function maySendAgain(error: unknown): boolean {
	return !isOutcomeUnknownError(error);
}

/** Attempts in all for a download whose body breaks mid-way (a read; started again from the first byte). */
const BROKEN_BODY_ATTEMPTS = 3;
const BROKEN_BODY_STEP_MS = 500;

/** The wait before reading a broken body again (500 ms, then 1 s), or undefined when the attempts are spent. */
export function brokenBodyRetryDelay(attempt: number): number | undefined {
	return attempt < BROKEN_BODY_ATTEMPTS ? BROKEN_BODY_STEP_MS * attempt : undefined;
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

interface RetryDecisionInput {
	/** The attempt that just failed (1 for the first). */
	attempt: number;
	elapsedMs: number;
	retryAfterMs?: number;
	policy: RetryPolicy;
	random?: () => number;
}

/**
 * After a 429: the wait before this request (and, through the pacer, every request on the credential)
 * goes again, or undefined when the request has no time left. A 429 created nothing, so it is waited out however
 * often it comes, for as long as `remainingMs` allows (the request's deadline: an item's Max Wait, or
 * `maxRateLimitedMs`); the wait is the Retry-After, or a backoff by how many 429s this request has had in a row.
 */
export function rateLimitedDelay(input: {
	/** 429s this request has had in a row (1 for the first). */
	limited: number;
	retryAfterMs?: number;
	/** Time left until the request's deadline. */
	remainingMs: number;
	policy: RetryPolicy;
	random?: () => number;
}): number | undefined {
	const most = input.policy.maxRateLimitedRetries;
	if (most !== undefined && input.limited > most) return undefined;
	const delay = input.retryAfterMs ?? backoffDelay(input.limited, input.policy, input.random);
	return delay > input.remainingMs ? undefined : delay;
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
