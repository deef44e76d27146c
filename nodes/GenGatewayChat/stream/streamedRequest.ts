import { NodeApiError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { asNodeError, redact } from '../../shared/transport/errors';
import { boundRanOut, idleWatch } from '../../shared/transport/idleWatch';
import type { IdleWatch } from '../../shared/transport/idleWatch';
import { redactDeep, StreamRedactor } from '../../shared/transport/redaction';
import { consumeSse, SseEventTooLargeError, STOP } from '../../shared/transport/sse';
import { brokenStreamError as brokenStream, serviceStreamError as serviceStream } from '../../shared/transport/streamErrors';
import type { BrokenCall } from '../../shared/transport/streamErrors';
import { MAX_ANSWER_TIME, TIMEOUT_ADVICE, totalBoundMsOf } from '../../shared/descriptions/timeoutOption';
import { credentialSecrets, gatewayStream } from '../../shared/transport/transport';
import type { Readable } from '../../shared/transport/transport';
import {
	AnswerTooLargeError,
	answerTimeRanOut,
	boundedAssembler,
	KEPT_PARTIAL_CHARS,
	maxAnswerBytes,
} from './answerBound';
import { redactedAssembler, StreamEventError } from './assembler';
import type { StreamAssembler } from './assembler';

/**
 * A streamed answer (docs/service-interface.md §6): request `stream: true`, read the server-sent events as they
 * arrive, forward each piece of text to n8n's chat when the execution is streamed there, and assemble the whole
 * answer. The stream is complete only at `data: [DONE]`; anything else is a broken stream whose upstream work may
 * still be running.
 * Once the service answered 200 with an event stream it has begun to answer: the generation ran and may be billed,
 * so every error from then on (a broken stream, an error event, `response.failed`) marks the call as paid and the
 * submission guard never sends it again.
 */

class UnreadableEventError extends Error {}

/** An event's data as JSON, or undefined when it is not JSON (the caller throws, outside any catch). */
function parseEventData(data: string): { value: unknown } | undefined {
	try {
		return { value: JSON.parse(data) };
	} catch {
		return undefined;
	}
}

/** How a streamed answer is read; the operation decides once whether there is one (chatOperation.ts). */
export interface StreamPlan {
	assembler: StreamAssembler;
	/** n8n streams this execution to a chat: each piece of text is forwarded there too. */
	toN8nChat: boolean;
	/** The bound on the assembled answer (option Max Answer Size), in bytes; the default when absent. */
	maxAnswerBytes?: number;
	/** The bound on its time as a whole (option Max Answer Time), in ms, from its headers on; the default when absent. */
	maxAnswerMs?: number;
}

interface StreamRequest extends StreamPlan {
	path: string;
	body: IDataObject;
	itemIndex: number;
	/** The node's Timeout: for the answer to begin, then for each next piece. */
	timeoutMs: number;
}

/** The Chat node's option that sets the bound, as the error names it. */
const MAX_ANSWER_OPTION = 'Max Answer Size (MB)';

const KEPT_NOTE =
	'The text received so far is kept in the error item ("partialContent") when the node continues on fail.';

const call = (request: { path: string; itemIndex: number }): BrokenCall => ({ ...request, keptNote: KEPT_NOTE });

function brokenStreamError(
	ctx: IExecuteFunctions,
	request: { path: string; itemIndex: number },
	partial: string,
	reason: string,
	advice?: string,
): NodeApiError {
	return brokenStream(ctx.getNode(), call(request), partial, reason, advice);
}

async function serviceStreamError(
	ctx: IExecuteFunctions,
	request: { path: string; itemIndex: number },
	partial: string,
	serviceMessage: string,
): Promise<NodeApiError> {
	return serviceStream(ctx.getNode(), call(request), partial, redact(serviceMessage, await credentialSecrets(ctx)));
}

function reasonOf(error: unknown): string {
	const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
	if (typeof code === 'string' && code) return `connection error ${code}`;
	if (typeof message === 'string' && message) return message;
	return 'the connection failed';
}

/** The stream's chunks, each one telling the idle watch that the service is still there. */
async function* watched(stream: Readable, watch: IdleWatch): AsyncGenerator<Buffer | string> {
	for await (const chunk of stream) {
		watch.touch();
		yield chunk as Buffer | string;
	}
}

const maxAnswerMsOf = (request: StreamRequest) => request.maxAnswerMs ?? totalBoundMsOf(MAX_ANSWER_TIME, undefined);

/**
 * Whether a time bound ended the stream (idleWatch.ts boundRanOut): silent for the Timeout (our watch hung up, or the
 * socket's own idle time-out destroyed it a moment before), or Max Answer Time in all.
 */
const timedOut = (watch: IdleWatch, request: StreamRequest) => boundRanOut(watch, request.timeoutMs);

function silentStreamError(ctx: IExecuteFunctions, request: StreamRequest, partial: string, watch: IdleWatch): NodeApiError {
	const { reason, advice } = answerTimeRanOut(timedOut(watch, request) ?? 'idle', {
		timeoutMs: request.timeoutMs,
		maxAnswerMs: maxAnswerMsOf(request),
	});
	return brokenStreamError(ctx, request, partial, reason, advice);
}

async function readAll(stream: AsyncIterable<Buffer | string>, limit = 16 * 1024 * 1024): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of stream) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
		size += buffer.length;
		if (size > limit) throw new Error(`answer larger than ${limit} bytes`);
		chunks.push(buffer);
	}
	return Buffer.concat(chunks).toString('utf8');
}

/** A service that ignores `stream: true` answers with plain JSON; take it as the whole answer. */
async function plainAnswer(
	ctx: IExecuteFunctions,
	request: StreamRequest,
	stream: Readable,
	watch: IdleWatch,
): Promise<IDataObject> {
	let text: string;
	try {
		text = await readAll(watched(stream, watch));
	} catch (error) {
		if (timedOut(watch, request)) throw silentStreamError(ctx, request, '', watch);
		throw brokenStreamError(ctx, request, '', reasonOf(error));
	}
	// Hung up by the idle watch: what arrived is cut short.
	if (timedOut(watch, request)) throw silentStreamError(ctx, request, '', watch);
	try {
		const parsed = JSON.parse(text) as unknown;
		if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as IDataObject;
	} catch {
		// fall through
	}
	throw brokenStreamError(ctx, request, '', 'the answer was neither an event stream nor a JSON object');
}

/** Sends the request with `stream: true` in `body` and returns the assembled answer (unstreamed shape). */
export async function streamedRequest(ctx: IExecuteFunctions, request: StreamRequest): Promise<IDataObject> {
	const { itemIndex } = request;
	const secrets = await credentialSecrets(ctx);
	// What is assembled is read masked (partialContent, the answer): a key split across deltas is whole only there.
	// Bounded as a whole (answerBound.ts): a stream that never ends stops at Max Answer Size.
	const bound = request.maxAnswerBytes ?? maxAnswerBytes(undefined);
	const assembler = redactedAssembler(boundedAssembler(request.assembler, bound, MAX_ANSWER_OPTION), secrets);
	const response = await gatewayStream(ctx, {
		method: 'POST',
		path: request.path,
		body: request.body,
		kind: 'submit',
		itemIndex,
		timeoutMs: request.timeoutMs,
		timeoutAdvice: TIMEOUT_ADVICE,
	});
	// The request's timeout may stop timing once the answer has begun (shared/transport/idleWatch.ts): a silence
	// longer than the Timeout hangs up here, and so does a stream still going after Max Answer Time.
	const watch = idleWatch(request.timeoutMs, () => response.close(), maxAnswerMsOf(request));
	const contentType = String(response.headers['content-type'] ?? '').toLowerCase();
	if (contentType.includes('application/json')) {
		try {
			return redactDeep(await plainAnswer(ctx, request, response.body, watch), secrets);
		} finally {
			watch.stop();
			response.close();
		}
	}

	// The one redaction (shared/transport/redaction.ts), event by event: a key the service echoes never reaches the
	// answer, n8n's chat or an error. The pieces for n8n's chat go through a StreamRedactor (a key split across
	// deltas: its beginning waits for the next piece), the assembled text through redactedAssembler.
	const forward = request.toN8nChat;
	const toChat = new StreamRedactor(secrets);
	let began = false;
	try {
		if (forward) {
			await ctx.sendChunk('begin', itemIndex);
			began = true;
		}
		const { done } = await consumeSse(watched(response.body, watch), async (event) => {
			// Redacted after parsing (redacting JSON text could cut an escape and break it), plain text as it is.
			const parsed = parseEventData(event.data);
			if (parsed) parsed.value = redactDeep(parsed.value, secrets);
			else event.data = redact(event.data, secrets);
			if (!parsed) {
				// An error event may carry plain text: it is still the service's error.
				if (event.event === 'error') {
					throw new StreamEventError(event.data.trim().slice(0, 500) || 'The service reported an error');
				}
				throw new UnreadableEventError('an event whose data is not JSON');
			}
			const payload = parsed.value;
			if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
				throw new UnreadableEventError('an event whose data is not a JSON object');
			}
			const piece = assembler.add(event.event, payload as IDataObject);
			const shown = forward && piece ? toChat.push(piece) : '';
			if (shown) await ctx.sendChunk('item', itemIndex, shown);
			// A terminal event (response.completed) makes the answer whole: no need to wait for [DONE] or a close.
			return assembler.finished() ? STOP : undefined;
		});
		if (!done && !assembler.finished()) {
			throw brokenStreamError(ctx, request, assembler.text(), 'the connection closed before data: [DONE]');
		}
		const rest = forward ? toChat.flush() : '';
		if (rest) await ctx.sendChunk('item', itemIndex, rest);
	} catch (error) {
		// Hung up by the idle watch (the read then ends or fails in whatever way the hang-up caused).
		if (timedOut(watch, request) && !ctx.getExecutionCancelSignal()?.aborted) {
			throw silentStreamError(ctx, request, assembler.text(), watch);
		}
		if (error instanceof NodeApiError) throw asNodeError(ctx, error, itemIndex);
		if (error instanceof AnswerTooLargeError) {
			// What arrived is kept cut: the error item must not hold the answer the bound refused.
			throw brokenStreamError(ctx, request, assembler.text().slice(0, KEPT_PARTIAL_CHARS), error.message,
				error.advice());
		}
		if (error instanceof StreamEventError) {
			throw await serviceStreamError(ctx, request, assembler.text(), error.message);
		}
		if (error instanceof SseEventTooLargeError) {
			throw brokenStreamError(ctx, request, assembler.text(), `${error.message}; the connection was closed`,
				'No service sends events this large: check the base URL of the credential and any proxy in between.');
		}
		// Cancelled: whatever the aborted read failed with goes on unchanged (see asNodeError).
		if (ctx.getExecutionCancelSignal()?.aborted) throw asNodeError(ctx, error, itemIndex);
		throw brokenStreamError(ctx, request, assembler.text(), reasonOf(error));
	} finally {
		watch.stop();
		response.close();
		if (began) await ctx.sendChunk('end', itemIndex);
	}
	return assembler.result();
}
