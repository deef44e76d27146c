import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

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
	if (status === 415)
		return 'The service did not accept the format of the request (it expects a JSON body): check any proxy in between.';
	if (status === 429)
		return 'Rate limit exceeded, still after retrying with backoff: lower the request rate (fewer items at once, a ' +
			'longer poll interval).';
	if (status === 502 || status === 503 || status === 504)
		return 'Upstream or overload failure at the service, still after retrying with backoff: try again later.';
	if (status >= 500) return 'The service failed: try again later.';
	return 'The service did not accept the request.';
}

const MAX_SNIPPET = 200;

/** Reason phrases for the statuses a service answers most, for a body that says nothing itself. */
const REASONS: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	409: 'Conflict',
	410: 'Gone',
	413: 'Payload Too Large',
	415: 'Unsupported Media Type',
	422: 'Unprocessable Entity',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Text that may carry the key or junk goes through here before it reaches a message: the key in any letter case (a
 * service may upper-case what it echoes) and any Bearer value.
 */
export function redact(text: string, secrets: readonly string[]): string {
	let out = text;
	for (const secret of secrets) {
		if (secret && secret.length >= 4) out = out.replace(new RegExp(escapeRegExp(secret), 'gi'), '***');
	}
	// A backslash ends the value too: inside JSON text it starts the escape of the closing quote.
	return out.replace(/Bearer\s+[^\s"',\\]+/gi, 'Bearer ***');
}

/**
 * At most MAX_SNIPPET characters of `text`, on one line. A cut never ends inside a word: a key cut in half would no
 * longer be recognised by `redact`, so the cut word goes entirely.
 */
function snippet(text: string): string {
	const line = text.replace(/\s+/g, ' ');
	if (line.length <= MAX_SNIPPET) return line;
	return `${line.slice(0, MAX_SNIPPET).replace(/[\w.~+/=-]+$/, '')}…`;
}

/** The service's words for an error: its message (a headline), and its `code` and `type` when it gave them. */
interface ServiceWords {
	message: string;
	/** False when the body held no message of the service's (empty, not JSON, no message field). */
	parsed: boolean;
	code?: string;
	type?: string;
}

/** A `code` or `type` worth showing: a non-empty string or a number (new-api sends `"code": ""` for none). */
function label(value: unknown): string | undefined {
	if (typeof value === 'string' && value.trim() !== '') return value.trim();
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	return undefined;
}

function wordsOf(message: string, parsed: boolean, from: Record<string, unknown>): ServiceWords {
	const words: ServiceWords = { message, parsed };
	const code = label(from.code);
	const type = label(from.type);
	if (code !== undefined) words.code = code;
	if (type !== undefined) words.type = type;
	return words;
}

/**
 * What the service said, from any body an error answer has: `{"error":{"message","type","code"}}` (OpenAI format,
 * new-api's relay and content errors), a flat `{"code","message"}` (new-api's task submission), `{"error":"..."}`, a
 * plain-text or HTML body (a short snippet), or nothing at all (a sentence saying so, with `status` when given).
 * `secrets` are masked before anything is cut short.
 */
export function messageFromBody(
	body: unknown,
	options: { status?: number; secrets?: readonly string[] } = {},
): ServiceWords {
	const secrets = options.secrets ?? [];
	let value = body;
	if (Buffer.isBuffer(value)) value = value.toString('utf8');
	if (typeof value === 'string') {
		const text = redact(value.trim(), secrets);
		if (text === '') {
			const { status } = options;
			const answered = status ? ` ${[status, REASONS[status]].filter(Boolean).join(' ')}` : '';
			return { message: `The service answered${answered} with an empty body (no message of its own).`, parsed: false };
		}
		try {
			value = JSON.parse(text);
		} catch {
			const kind = /^<(!doctype|html)/i.test(text) ? 'an HTML page' : 'text that is not JSON';
			return { message: `The service answered with ${kind}: "${snippet(text)}"`, parsed: false };
		}
	}
	if (value && typeof value === 'object' && !Array.isArray(value)) {
		const record = value as Record<string, unknown>;
		const error = record.error;
		if (error && typeof error === 'object' && !Array.isArray(error)) {
			const inner = error as Record<string, unknown>;
			if (typeof inner.message === 'string' && inner.message.trim() !== '') return wordsOf(inner.message, true, inner);
			const named = label(inner.code) ?? label(inner.type);
			if (named !== undefined) return wordsOf(`The service reported an error (${named}) without a message.`, true, inner);
		}
		if (typeof error === 'string' && error.trim() !== '') return wordsOf(error, true, record);
		if (typeof record.message === 'string' && record.message.trim() !== '') {
			return wordsOf(record.message, true, record);
		}
	}
	if (value === undefined || value === null || value === '') {
		return { message: 'The service answered without an error message.', parsed: false };
	}
	const json = redact(JSON.stringify(value) ?? String(value), secrets);
	return { message: `The service answered without an error message: ${snippet(json)}`, parsed: false };
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

/** The service's `code` and `type` as a sentence of the description (the headline keeps only its message). */
function detailsOf(words: ServiceWords, secrets: readonly string[]): string | undefined {
	const parts: string[] = [];
	if (words.code !== undefined) parts.push(`code "${words.code}"`);
	if (words.type !== undefined && words.type !== words.code) parts.push(`type "${words.type}"`);
	return parts.length ? redact(`The service's error ${parts.join(', ')}.`, secrets) : undefined;
}

/**
 * An HTTP error answer as a NodeApiError built from plain data only: no request config (and so no header) inside.
 * The headline is the service's message; the description the hint for the status, then the service's code and type.
 */
export function apiErrorFromResponse(node: INode, input: ApiErrorInput): NodeApiError {
	const words = messageFromBody(input.body, { status: input.status, secrets: input.secrets });
	const safeMessage = redact(words.message, input.secrets);
	const description = [hintForStatus(input.status), detailsOf(words, input.secrets), input.note]
		.filter(Boolean)
		.join(' ');
	// The path may be a file URL's (a redirect's Location the service chose): masked like the service's words.
	const message = `${input.method} ${redact(input.path, input.secrets)} failed with ${input.status}: ${safeMessage}`;
	const error = new NodeApiError(
		node,
		{ message: safeMessage, httpCode: String(input.status) },
		{ message, description, httpCode: String(input.status), itemIndex: input.itemIndex },
	);
	// Keep the service's words even when they mention a network code (NodeApiError would replace them).
	error.message = message;
	if (words.code !== undefined) error.context.serviceCode = redact(words.code, input.secrets);
	if (words.type !== undefined) error.context.serviceType = redact(words.type, input.secrets);
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
		: `${input.method} ${input.path} failed: ${input.reason ?? 'could not reach the service'} (${input.code}).`;
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
