import { answerVerdict, backoffDelay, DEFAULT_RETRY_POLICY, nextRetryDelay, parseRetryAfter } from '../../nodes/shared/transport/retry';

const isRetryableStatus = (status: number) => answerVerdict('read', status) === 'retry';

const policy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 20_000 };

describe('retry timing', () => {
	it('retries exactly the documented transient statuses', () => {
		expect([400, 401, 403, 404, 409, 410, 429, 500, 502, 503, 504].filter(isRetryableStatus)).toEqual([429, 502, 503, 504]);
	});

	it('parses Retry-After as seconds or as an HTTP date', () => {
		expect(parseRetryAfter('3')).toBe(3000);
		expect(parseRetryAfter(['2'])).toBe(2000);
		expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:05 GMT', Date.parse('Sun, 22 Nov 2026 10:00:00 GMT'))).toBe(5000);
		expect(parseRetryAfter('soon')).toBeUndefined();
		expect(parseRetryAfter(undefined)).toBeUndefined();
	});

	it('backs off exponentially with jitter between half and all of the step, capped', () => {
		expect(backoffDelay(1, policy, () => 0)).toBe(500);
		expect(backoffDelay(1, policy, () => 1)).toBe(1000);
		expect(backoffDelay(3, policy, () => 1)).toBe(4000);
		expect(backoffDelay(10, policy, () => 1)).toBe(8000);
		expect(backoffDelay(10, policy, () => 0)).toBe(4000);
	});

	it('honours Retry-After, never waiting less than it says', () => {
		expect(nextRetryDelay({ attempt: 1, elapsedMs: 0, retryAfterMs: 3000, policy, random: () => 0 })).toBe(3000);
	});

	it('stops on attempts, on total time, and on a Retry-After beyond the longest wait', () => {
		expect(nextRetryDelay({ attempt: 4, elapsedMs: 0, policy })).toBeUndefined();
		expect(nextRetryDelay({ attempt: 1, elapsedMs: 19_900, policy, random: () => 0 })).toBeUndefined();
		expect(nextRetryDelay({ attempt: 1, elapsedMs: 0, retryAfterMs: 60_000, policy })).toBeUndefined();
	});

	it('has bounded defaults', () => {
		expect(DEFAULT_RETRY_POLICY.maxAttempts).toBeLessThanOrEqual(10);
		expect(DEFAULT_RETRY_POLICY.maxTotalMs).toBeLessThanOrEqual(5 * 60_000);
	});
});
