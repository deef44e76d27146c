import type { INode } from 'n8n-workflow';

import { apiErrorFromResponse, networkError, redact } from '../shared/transport/errors';
import { answerVerdict, failureVerdict, parseRetryAfter } from '../shared/transport/retry';

/**
 * The money rule for the model's own calls (docs/ai-agent.md "What the SDK retries").
 *
 * `supplyModel` builds LangChain's ChatOpenAI on the official OpenAI client with that client's own retries off
 * (`maxRetries: 0`); every attempt goes through LangChain's AsyncCaller (p-retry, `retries` = Maximum Retries), whose
 * `onFailedAttempt` is n8n's handler wrapped around ours: ours runs first, and whatever it throws ends the call at
 * once (n8n re-wraps a NodeApiError as itself). n8n's own handler then throws on a cancellation, ECONNABORTED and
 * 400–409, and otherwise lets p-retry retry only when `error.retriesLeft > 0`, a field the p-retry inside
 * @langchain/core 1.x no longer sets: on its own the SDK retries nothing at all.
 *
 * Ours decides per attempt with the package's one rule (nodes/shared/transport/retry.ts):
 * - 429, 502, 503 (the service said "not now" and created nothing) and a connection that was never made (refused,
 *   no DNS): may be retried. We set `retriesLeft` so n8n's handler lets p-retry decide (p-retry stops after Maximum
 *   Retries) and `retryAfterMs` from `Retry-After`, which p-retry waits at least; a Retry-After above 30 s ends the
 *   retries. The error's message and description are rewritten now, so the last attempt's error reads right too.
 * - anything else ends the call now: a 4xx refusal (nothing created), and every unknown outcome (500, 504, a
 *   connection dropped after the request went out, a timeout): those are never resent.
 * A stream that breaks after its 200 is past the AsyncCaller (LangChain iterates it outside) and never resent either.
 */

const PATH = '/v1/chat/completions';
const METHOD = 'POST';
/** The longest Retry-After we wait for; a longer one ends the retries (as the other nodes do). */
const MAX_RETRY_AFTER_MS = 30_000;

type AttemptError = Error & {
	status?: unknown;
	error?: unknown;
	headers?: unknown;
	code?: unknown;
	cause?: unknown;
	description?: string;
	retriesLeft?: number;
	retryAfterMs?: number;
};

/** The first network code (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET…) along the error's cause chain. */
function networkCodeOf(error: unknown): string | undefined {
	let current: unknown = error;
	for (let depth = 0; current && typeof current === 'object' && depth < 6; depth++) {
		const code = (current as { code?: unknown }).code;
		if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
		current = (current as { cause?: unknown }).cause;
	}
	return undefined;
}

function headerOf(headers: unknown, name: string): string | undefined {
	if (!headers || typeof headers !== 'object') return undefined;
	const getter = (headers as { get?: unknown }).get;
	if (typeof getter === 'function') return ((getter as (key: string) => string | null).call(headers, name) ?? undefined);
	const value = (headers as Record<string, unknown>)[name];
	return typeof value === 'string' ? value : undefined;
}

/** LangChain's TimeoutError (the OpenAI client's timeout) or undici's headers/body timeout (the SDK's dispatcher). */
function isTimeout(error: AttemptError, code: string | undefined): boolean {
	return error.name === 'TimeoutError' || /TIMEOUT/.test(code ?? '') || /timed? ?out/i.test(error.message ?? '');
}

/** Lets p-retry try again (n8n's handler asks `retriesLeft`), keeping our words for when it gives up. */
function allowRetry(error: AttemptError, replacement: Error & { description?: string | null }, retryAfterMs?: number): void {
	error.retriesLeft = 1;
	if (retryAfterMs !== undefined) error.retryAfterMs = retryAfterMs;
	error.message = replacement.message;
	error.description = replacement.description ?? undefined;
}

/**
 * `onFailedAttempt` for supplyModel: returns to let p-retry try again, throws (a NodeApiError with the service's
 * message and the hint, never the key) to end the call.
 */
export function failedAttemptHandler(node: INode, apiKey: string, timeoutMs: number): (raw: unknown) => void {
	const secrets = [apiKey];
	return (raw: unknown) => {
		if (!(raw instanceof Error)) return;
		const error = raw as AttemptError;
		// A cancelled execution: n8n's handler ends the call unchanged.
		if (error.name === 'AbortError' || /^(Cancel|AbortError)/.test(error.message ?? '')) return;
		const status = typeof error.status === 'number' ? error.status : undefined;
		if (status !== undefined) {
			const body = error.error !== undefined ? { error: error.error } : redact(error.message ?? '', secrets);
			const verdict = answerVerdict('submit', status);
			const apiError = apiErrorFromResponse(node, {
				status,
				body,
				method: METHOD,
				path: PATH,
				secrets,
				note:
					verdict === 'unknown'
						? 'The service failed after the request arrived: the outcome is unknown, so it was not resent.'
						: undefined,
			});
			if (verdict === 'retry') {
				const retryAfterMs = parseRetryAfter(headerOf(error.headers, 'retry-after'));
				if (retryAfterMs === undefined || retryAfterMs <= MAX_RETRY_AFTER_MS) {
					allowRetry(error, apiError, retryAfterMs);
					return;
				}
			}
			throw apiError;
		}
		const code = networkCodeOf(error);
		if (isTimeout(error, code)) {
			throw networkError(node, {
				code: 'ETIMEDOUT',
				method: METHOD,
				path: PATH,
				outcomeUnknown: true,
				reason: `no answer within the timeout (${Math.round(timeoutMs / 1000)} s)`,
				note: 'To wait longer, raise the node\'s "Timeout" option (Options → Timeout, in seconds).',
			});
		}
		if (code !== undefined && failureVerdict('submit', code) === 'retry') {
			allowRetry(error, networkError(node, { code, method: METHOD, path: PATH, outcomeUnknown: false }));
			return;
		}
		// No code proving that nothing was sent: the request may have reached the service.
		throw networkError(node, {
			code: code ?? 'no code',
			method: METHOD,
			path: PATH,
			outcomeUnknown: true,
			reason: code ? undefined : `the connection failed after the request was sent (${redact(error.message ?? '', secrets)})`,
		});
	};
}
