import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, ISupplyDataFunctions } from 'n8n-workflow';
import type { StreamChunk } from '@n8n/ai-node-sdk';

import {
	AnswerTooLargeError,
	answerTimeRanOut,
	boundedAssembler,
	KEPT_PARTIAL_CHARS,
	maxAnswerBytes,
} from '../GenGatewayChat/stream/answerBound';
import { ChatCompletionAssembler } from '../GenGatewayChat/stream/chatCompletionAssembler';
import { redactedAssembler, StreamEventError } from '../GenGatewayChat/stream/assembler';
import type { StreamAssembler } from '../GenGatewayChat/stream/assembler';
import { MAX_ANSWER_TIME, TIMEOUT_ADVICE, totalBoundMsOf } from '../shared/descriptions/timeoutOption';
import { keptBriefly, recall, remember } from '../shared/run/guardMemory';
import { fingerprint } from '../shared/run/fingerprint';
import { askedBefore, suppliedAs } from '../shared/run/callIdentity';
import { guardScope, guardSlot, rootNodeOf } from '../shared/run/submissionGuard';
import type { GuardSlot } from '../shared/run/submissionGuard';
import { rejectErrorAnswer } from '../shared/transport/answerError';
import { asNodeError, redact } from '../shared/transport/errors';
import { boundRanOut, idleWatch } from '../shared/transport/idleWatch';
import type { IdleWatch } from '../shared/transport/idleWatch';
import { redactDeep, StreamRedactor } from '../shared/transport/redaction';
import { maySendAgain } from '../shared/transport/retry';
import type { RetryPolicy } from '../shared/transport/retry';
import { SseEventTooLargeError, SseParser } from '../shared/transport/sse';
import type { SseEvent } from '../shared/transport/sse';
import { credentialSecrets, gatewayJson, gatewayStream } from '../shared/transport/transport';
import type { Readable } from '../shared/transport/transport';
import { brokenStreamError, emptyAnswerError, serviceStreamError } from '../shared/transport/streamErrors';
import { finishReasonOf, toolCallsOf, usageOf } from './wireFormat';

/**
 * The Chat Model's one paid POST, /v1/chat/completions, streamed or not, on the package's transport: the paid-call
 * rule (nothing resent whose outcome is unknown, no redirect followed), 429s waited out on the credential's pace, the
 * service's error with the hint, every answer redacted; streamed, the same SSE parser and chat-completion assembler
 * as the Chat node, complete only at `data: [DONE]`.
 */

const COMPLETIONS_PATH = '/v1/chat/completions';
/** The Chat Model shows no error item: what arrived is only in the error's context. */
const CALL = { path: COMPLETIONS_PATH };

export interface CompletionSettings {
	itemIndex: number;
	/** The node's Timeout: for the answer to begin, then (streamed) for each next piece. */
	timeoutMs: number;
	/** Streamed: Max Answer Time, the bound on the answer as a whole (ms); the default when absent. */
	maxAnswerMs?: number;
	/** The node's Maximum Retries: after a 429, 502, 503 or a connection that was never made. */
	maxRetries: number;
}

/**
 * The transport and the guard take an execute context; a supply-data context has every member they use (getNode,
 * getCredentials, getExecutionId, getExecutionCancelSignal, getWorkflowDataProxy, logger, helpers'
 * httpRequestWithAuthentication), so it goes in as one.
 */
function asGatewayContext(ctx: ISupplyDataFunctions): IExecuteFunctions {
	return ctx as unknown as IExecuteFunctions;
}

function retryPolicy(settings: CompletionSettings): Partial<RetryPolicy> {
	const retries = Math.max(0, Math.floor(settings.maxRetries));
	return { maxAttempts: retries + 1, maxRateLimitedRetries: retries };
}

/**
 * Where a call of the model is remembered: the root node's run (n8n gives a sub-node the root's run index), the
 * model as the root asked for it, the conversation without its system messages, and how many calls of that
 * conversation this try of the root asked before (callIdentity.ts). A sub-node is not told which row of its root a
 * call serves (root nodes ask for the model with index 0, and one model may serve every row): a chain asks for the
 * model once per row, so which model of the try stands for the row; an agent shares one, so the conversation and its
 * count do. Two rows with the same text are two calls; the root's retry asks them in the same order again. The system
 * message, where a prompt's `{{ $now }}` usually is, is left out, so a retry's call is the same call.
 */
function callSlots(ctx: IExecuteFunctions, itemIndex: number, body: IDataObject): GuardSlot[] {
	const { executionId, nodeName, runIndex } = guardScope(ctx);
	const root = rootNodeOf(ctx)?.name;
	const scope = { executionId, runIndex, nodeName: typeof root === 'string' ? `${root}\u0000${nodeName}` : nodeName };
	const messages = Array.isArray(body.messages) ? (body.messages as IDataObject[]) : [];
	const asked = messages.filter((message) => message.role !== 'system' && message.role !== 'developer');
	const supply = suppliedAs(ctx);
	const call = `${supply} ${fingerprint(JSON.stringify([body.model, asked]))}`;
	const slots = [guardSlot(scope, itemIndex, `POST ${COMPLETIONS_PATH} ${call} ${askedBefore(ctx, call) ?? 0}`)];
	// The first call of its model in this try has a second name: a chain's row is its model, asked once, so a retried
	// row is the same call even when its prompt holds {{ $now }} (its conversation then differs on every try). Only the
	// first: an agent's later calls depend on how many steps the model took, which a retry may change.
	const first = askedBefore(ctx, `${supply} call`) === 0;
	if (first && supply !== 's') slots.push(guardSlot(scope, itemIndex, `POST ${COMPLETIONS_PATH} ${supply} first`));
	return slots;
}

/**
 * The submission guard across the root node's Retry On Fail (shared/run/submissionGuard.ts): a call whose outcome
 * was unknown is never sent again in this run of the root node (callSlots say which call is the same). Only unknown
 * outcomes are remembered: an answered call is neither reused nor held back (a retry asks it again, as the agent's
 * steps after it depend on its answer).
 */
class UnknownOutcomeGuard {
	private readonly slots: GuardSlot[];

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly itemIndex: number,
		body: IDataObject,
	) {
		this.slots = callSlots(ctx, itemIndex, body);
	}

	/** Throws when an earlier try of this run had this request's outcome unknown. */
	check(): void {
		// Either name of the call: an unknown outcome under one is never sent again (a retry may change the other).
		const earlier = this.slots.map((slot) => recall(slot.run, slot.key)).find((entry) => entry?.state === 'unknown');
		if (earlier?.state !== 'unknown') return;
		const first = earlier.error;
		const message = `Not resubmitted: an earlier try of this item in this execution had an unknown outcome ` +
			`(${first.message ?? `POST ${COMPLETIONS_PATH}`}). The service may already have the work and charge for it.`;
		const error = new NodeOperationError(this.ctx.getNode(), message, {
			itemIndex: this.itemIndex,
			description: 'Check with the service (its usage) whether the answer was produced before you run it again; ' +
				'resubmitting blindly can pay for the same work twice.',
		});
		error.message = message;
		if (first.context) Object.assign(error.context, first.context);
		throw error;
	}

	/** A failed call: remembered when it may have been accepted (then never resent). */
	failed(error: unknown): void {
		// Briefly: a sub-node's run never says it ended, so the memory's bounds never reach what it keeps.
		if (maySendAgain(error)) return;
		for (const slot of this.slots) remember(slot.run, slot.key, { state: 'unknown', error: keptBriefly(error), at: Date.now() });
	}
}

/** A whole answer: a 2xx with `{"error": …}` is the service's error, one without any choice is no answer. */
async function checkedAnswer(ctx: IExecuteFunctions, answer: IDataObject, itemIndex: number): Promise<IDataObject> {
	await rejectErrorAnswer(ctx, answer, { method: 'POST', path: COMPLETIONS_PATH, itemIndex });
	if (!Array.isArray(answer.choices) || answer.choices.length === 0) {
		throw emptyAnswerError(ctx.getNode(), COMPLETIONS_PATH);
	}
	return answer;
}

/** A chat completion, not streamed: the `chat.completion` as the service returned it, redacted. */
export async function completeChat(
	supply: ISupplyDataFunctions,
	body: IDataObject,
	settings: CompletionSettings,
): Promise<IDataObject> {
	const ctx = asGatewayContext(supply);
	const guard = new UnknownOutcomeGuard(ctx, settings.itemIndex, body);
	guard.check();
	try {
		const answer = await gatewayJson<IDataObject>(ctx, {
			method: 'POST',
			path: COMPLETIONS_PATH,
			body,
			kind: 'submit',
			itemIndex: settings.itemIndex,
			timeoutMs: settings.timeoutMs,
			timeoutAdvice: TIMEOUT_ADVICE,
			retry: retryPolicy(settings),
		});
		return await checkedAnswer(ctx, answer, settings.itemIndex);
	} catch (error) {
		guard.failed(error);
		throw asNodeError(ctx, error, settings.itemIndex);
	}
}

class UnreadableEventError extends Error {}

/** The stream's chunks, each one telling the idle watch that the service is still there. */
async function* watched(stream: Readable, watch: IdleWatch): AsyncGenerator<Buffer | string> {
	for await (const chunk of stream) {
		watch.touch();
		yield chunk as Buffer | string;
	}
}

async function readAll(stream: AsyncIterable<Buffer | string>, limit = 16 * 1024 * 1024): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of stream) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
		size += buffer.length;
		if (size > limit) throw new Error(`answer larger than ${limit} bytes`);
		chunks.push(buffer);
	}
	return Buffer.concat(chunks).toString('utf8');
}

/** JSON text as a value, or undefined when it is not JSON (the caller throws, outside any catch). */
function parsed(text: string): { value: unknown } | undefined {
	try {
		return { value: JSON.parse(text) };
	} catch {
		return undefined;
	}
}

/** One event's payload, redacted after parsing (redacting JSON text could cut an escape and break it). */
function payloadOf(event: SseEvent, secrets: string[]): IDataObject {
	const json = parsed(event.data);
	// An error event may carry plain text: it is still the service's error.
	if (!json && event.event === 'error') {
		throw new StreamEventError(redact(event.data, secrets).trim().slice(0, 500) || 'The service reported an error');
	}
	if (!json) throw new UnreadableEventError('an event whose data is not JSON');
	const value = json.value;
	if (!value || typeof value !== 'object' || Array.isArray(value)) {
		throw new UnreadableEventError('an event whose data is not a JSON object');
	}
	return redactDeep(value as IDataObject, secrets);
}

/** The whole answer's tool calls and end, as the SDK's stream chunks. */
function* closingChunks(completion: IDataObject): Generator<StreamChunk> {
	const choice = ((completion.choices as IDataObject[] | undefined)?.[0] ?? {}) as IDataObject;
	// Whole calls, once the answer is complete: LangChain joins tool-call chunks by id (the SDK gives them all index
	// 0), so every call goes with its id, and no tool runs on a call from a stream that broke.
	const calls = toolCallsOf(choice.message as IDataObject | undefined);
	for (const [index, call] of calls.entries()) {
		yield { type: 'tool-call-delta', id: call.id ?? `call_${index}`, name: call.name, argumentsDelta: call.arguments };
	}
	yield { type: 'finish', finishReason: finishReasonOf(choice.finish_reason) ?? 'stop', usage: usageOf(completion.usage) };
}

/**
 * A chat completion, streamed: the text as it arrives, then the tool calls and the end (with usage) once `[DONE]`
 * came. Every failure after the 200 counts as paid (streamErrors.ts).
 */
export async function* streamChat(
	supply: ISupplyDataFunctions,
	body: IDataObject,
	settings: CompletionSettings,
): AsyncGenerator<StreamChunk> {
	const ctx = asGatewayContext(supply);
	const node = ctx.getNode();
	const { itemIndex, timeoutMs } = settings;
	const guard = new UnknownOutcomeGuard(ctx, itemIndex, body);
	guard.check();
	const secrets = await credentialSecrets(ctx);
	// Read masked (the error's partialContent, the whole answer's tool calls): a key split across deltas is whole only
	// in the assembled text. The text the agent gets as it comes goes through a StreamRedactor for the same reason.
	// Bounded as a whole at the Chat node's default (answerBound.ts): a stream that never ends stops there.
	const bounded = boundedAssembler(new ChatCompletionAssembler(), maxAnswerBytes(undefined));
	const assembler: StreamAssembler = redactedAssembler(bounded, secrets);
	const shown = new StreamRedactor(secrets);
	let watch: IdleWatch | undefined;
	let close: (() => void) | undefined;
	const bounds = { timeoutMs, maxAnswerMs: settings.maxAnswerMs ?? totalBoundMsOf(MAX_ANSWER_TIME, undefined) };
	const timedOut = () => boundRanOut(watch, timeoutMs);
	try {
		const response = await gatewayStream(ctx, {
			method: 'POST',
			path: COMPLETIONS_PATH,
			body,
			kind: 'submit',
			itemIndex,
			timeoutMs,
			timeoutAdvice: TIMEOUT_ADVICE,
			retry: retryPolicy(settings),
		});
		close = () => response.close();
		// The request's timeout may stop timing once the answer has begun (shared/transport/idleWatch.ts).
		watch = idleWatch(timeoutMs, () => response.close(), bounds.maxAnswerMs);
		const chunks = watched(response.body, watch);
		if (String(response.headers['content-type'] ?? '').toLowerCase().includes('application/json')) {
			// A service that ignores `stream: true` answers with plain JSON: the whole answer at once.
			const text = await readAll(chunks);
			if (timedOut()) throw new UnreadableEventError('the Timeout ran out');
			const answer = parsed(text)?.value;
			if (!answer || typeof answer !== 'object' || Array.isArray(answer)) {
				throw new UnreadableEventError('the answer was neither an event stream nor a JSON object');
			}
			const completion = await checkedAnswer(ctx, redactDeep(answer as IDataObject, secrets), itemIndex);
			const message = ((completion.choices as IDataObject[])[0]?.message ?? {}) as IDataObject;
			if (typeof message.content === 'string' && message.content) yield { type: 'text-delta', delta: message.content };
			yield* closingChunks(completion);
			return;
		}
		const parser = new SseParser();
		const take = (events: SseEvent[]) =>
			events.map((event) => shown.push(assembler.add(event.event, payloadOf(event, secrets))));
		for await (const chunk of chunks) {
			for (const piece of take(parser.push(chunk))) if (piece) yield { type: 'text-delta', delta: piece };
			if (parser.overflow) throw parser.overflow;
			if (parser.done) break;
		}
		if (!parser.done) for (const piece of take(parser.end())) if (piece) yield { type: 'text-delta', delta: piece };
		if (!parser.done) {
			if (timedOut()) throw new UnreadableEventError('the Timeout ran out');
			throw brokenStreamError(node, CALL, assembler.text(), 'the connection closed before data: [DONE]');
		}
		const rest = shown.flush();
		if (rest) yield { type: 'text-delta', delta: rest };
		yield* closingChunks(assembler.result());
	} catch (error) {
		const failure = streamFailure(ctx, error, assembler.text(), timedOut(), bounds);
		guard.failed(failure);
		throw failure;
	} finally {
		watch?.stop();
		close?.();
	}
}

/** What a failure of the streamed call means, in the Chat node's words. */
function streamFailure(
	ctx: IExecuteFunctions,
	error: unknown,
	partial: string,
	ranOut: 'idle' | 'total' | undefined,
	bounds: { timeoutMs: number; maxAnswerMs: number },
) {
	const node = ctx.getNode();
	const cancelled = ctx.getExecutionCancelSignal()?.aborted === true;
	if (ranOut && !cancelled) {
		const { reason, advice } = answerTimeRanOut(ranOut, bounds);
		return brokenStreamError(node, CALL, partial, reason, advice);
	}
	// The transport's errors (before the 200, or a 2xx `{"error": …}`) and ours are already what they must be.
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	if (error instanceof AnswerTooLargeError) {
		return brokenStreamError(node, CALL, partial.slice(0, KEPT_PARTIAL_CHARS), error.message, error.advice());
	}
	if (error instanceof StreamEventError) return serviceStreamError(node, CALL, partial, error.message);
	if (error instanceof SseEventTooLargeError) {
		return brokenStreamError(node, CALL, partial, `${error.message}; the connection was closed`,
			'No service sends events this large: check the base URL of the credential and any proxy in between.');
	}
	if (error instanceof UnreadableEventError) return brokenStreamError(node, CALL, partial, error.message);
	// Cancelled: whatever the aborted read failed with goes on unchanged (see asNodeError).
	if (cancelled) return asNodeError(ctx, error);
	const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
	const reason = typeof code === 'string' && code ? `connection error ${code}` :
		typeof message === 'string' && message ? message : 'the connection failed';
	return brokenStreamError(node, CALL, partial, reason);
}
