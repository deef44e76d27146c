import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode, JsonObject } from 'n8n-workflow';

/** What a user should do, per status the service documents (docs/service-interface.md §7). */
export function hintForStatus(status: number): string {
	if (status >= 200 && status < 300)
		return "The service answered but its body could not be read (not JSON, cut short, or empty): check the " +
			"credential's base URL (it must point at the service's API) and any proxy in between.";
	if (status === 400) return 'The service rejected the request as invalid: correct the parameters named above.';
	if (status === 401 || status === 403)
		return "Check the API key's permissions: is it the right key for this base URL, and may it use this endpoint?";
	if (status === 404) return 'Not found: check the ID and the base URL of the credential.';
	if (status === 410) return 'The resource has expired on the service.';
	if (status === 429)
		return 'Rate limit exceeded, still after retrying with backoff: lower the request rate (fewer items at once, a ' +
			'longer poll interval).';
	if (status === 502 || status === 503 || status === 504)
		return 'Upstream or overload failure at the service, still after retrying with backoff: try again later.';
	if (status >= 500) return 'The service failed: try again later.';
	return 'The service did not accept the request.';
}

const MAX_SNIPPET = 200;

/** Text that may carry the key or junk goes through here before it reaches a message. */
export function redact(text: string, secrets: readonly string[]): string {
	let out = text;
	for (const secret of secrets) {
		if (secret && secret.length >= 4) out = out.split(secret).join('***');
	}
	return out.replace(/Bearer\s+[^\s"',]+/gi, 'Bearer ***');
}

/** The service's `error.message` when the body has one; otherwise a short, safe description of what came back. */
export function messageFromBody(body: unknown): { message: string; parsed: boolean } {
	let value = body;
	if (Buffer.isBuffer(value)) value = value.toString('utf8');
	if (typeof value === 'string') {
		const text = value.trim();
		if (text === '') return { message: 'The service answered with an empty body.', parsed: false };
		try {
			value = JSON.parse(text);
		} catch {
			const kind = /^<(!doctype|html)/i.test(text) ? 'an HTML page' : 'text that is not JSON';
			const snippet = text.replace(/\s+/g, ' ').slice(0, MAX_SNIPPET);
			return { message: `The service answered with ${kind}: "${snippet}"`, parsed: false };
		}
	}
	if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		const error = record.error;
		if (error && typeof error === 'object' && typeof (error as JsonObject).message === 'string') {
			return { message: (error as JsonObject).message as string, parsed: true };
		}
		if (typeof error === 'string') return { message: error, parsed: true };
		if (typeof record.message === 'string') return { message: record.message, parsed: true };
	}
	return { message: 'The service answered without an error message.', parsed: false };
}

interface ApiErrorInput {
	status: number;
	body: unknown;
	method: string;
	path: string;
	itemIndex?: number;
	secrets: readonly string[];
	/** Extra sentence appended to the description (e.g. how many attempts were made). */
	note?: string;
}

/** An HTTP error answer as a NodeApiError built from plain data only: no request config (and so no header) inside. */
export function apiErrorFromResponse(node: INode, input: ApiErrorInput): NodeApiError {
	const safeMessage = redact(messageFromBody(input.body).message, input.secrets);
	const description = [hintForStatus(input.status), input.note].filter(Boolean).join(' ');
	const message = `${input.method} ${input.path} failed with ${input.status}: ${safeMessage}`;
	const error = new NodeApiError(
		node,
		{ message: safeMessage, httpCode: String(input.status) },
		{ message, description, httpCode: String(input.status), itemIndex: input.itemIndex },
	);
	// Keep the service's words even when they mention a network code (NodeApiError would replace them).
	error.message = message;
	return error;
}

interface NetworkErrorInput {
	code: string;
	method: string;
	path: string;
	itemIndex?: number;
	/** A paid submission that may have reached the service. */
	outcomeUnknown: boolean;
	/** Why the outcome is unknown, when it is not a failed connection. */
	reason?: string;
	note?: string;
}

/** Marks errors whose request may have been accepted; callers must never resend such a request. */
export const OUTCOME_UNKNOWN = 'outcomeUnknown';

export function networkError(node: INode, input: NetworkErrorInput): NodeApiError {
	const reason = input.reason ?? `the connection failed (${input.code}) after the request was sent`;
	const message = input.outcomeUnknown
		? `The outcome of ${input.method} ${input.path} is unknown: ${reason}. ` +
			'The service may have accepted it (and may charge for it), so it was not resubmitted.'
		: `${input.method} ${input.path} failed: could not reach the service (${input.code}).`;
	const description = [
		input.outcomeUnknown
			? 'Before submitting again, check with the service whether a task was created (its task list or your ' +
				'usage), or wait and look for it; resubmitting blindly can pay for the same work twice.'
			: 'Check the base URL of the credential, the network and any proxy between n8n and the service.',
		input.note,
	]
		.filter(Boolean)
		.join(' ');
	const error = new NodeApiError(node, { message }, { message, description, itemIndex: input.itemIndex });
	// NodeApiError swaps a message naming a network code for its generic "you can retry" text: exactly wrong here.
	error.message = message;
	error.context[OUTCOME_UNKNOWN] = input.outcomeUnknown;
	error.context.networkCode = input.code;
	return error;
}

export function isOutcomeUnknownError(error: unknown): boolean {
	const context = (error as { context?: Record<string, unknown> } | undefined)?.context;
	return context?.[OUTCOME_UNKNOWN] === true;
}

/** What a node may ask about the execution it runs in (load-options calls have no cancel signal). */
interface ErrorSite {
	getNode(): INode;
	getExecutionCancelSignal?: () => AbortSignal | undefined;
}

/**
 * n8n's cancellation errors (Manual/Timeout/SystemShutdown…ExecutionCancelledError), recognised by name as the engine
 * itself does, so a copy of n8n-workflow other than the one the package resolves is recognised too.
 */
function isCancellationError(error: unknown): boolean {
	return error instanceof Error && /CancelledError$/.test(error.name);
}

/**
 * A caught value as the error a node re-throws: NodeApiError and NodeOperationError unchanged (with their context:
 * outcome unknown, partial content…); n8n's cancellation errors, and whatever a request fails with once the
 * execution's cancel signal has fired, unchanged too, so the engine records the run as cancelled, not failed; anything
 * else wrapped in a NodeOperationError for the item. `throw asNodeError(...)` is what n8n's `require-node-api-error`
 * rule accepts inside a catch.
 */
export function asNodeError(site: ErrorSite, error: unknown, itemIndex?: number): Error {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	if (isCancellationError(error)) return error as Error;
	if (error instanceof Error && site.getExecutionCancelSignal?.()?.aborted) return error;
	const cause = error instanceof Error ? error : new Error(String(error));
	return new NodeOperationError(site.getNode(), cause, { itemIndex });
}
