/** One request's context, and the only helpers that write answers (so faults can intercept every answer). */
import type { IncomingMessage, ServerResponse } from 'http';
import { createHash } from 'crypto';
import type { FaultRule, LogEntry, MockState, Personality } from './types';

export interface RequestContext {
	req: IncomingMessage;
	res: ServerResponse;
	url: URL;
	state: MockState;
	entry: LogEntry;
	/** Parsed JSON body (undefined when empty or not JSON). */
	body?: unknown;
	/** The body was there but was not JSON. */
	jsonInvalid?: boolean;
	/** A fault that acts while or after the request is handled (cut-after-accept, cut-mid-body, sse-cut). */
	fault?: FaultRule;
	/** The wire this request is answered in (the process's personality, or 'new-api' by a marker or its task). */
	personality: Personality;
}

export function note(ctx: RequestContext, outcome: string): void {
	ctx.entry.outcome = outcome;
}

/** Destroys the connection without (further) answer: the client sees ECONNRESET / socket hang up. */
export function cut(ctx: RequestContext, outcome?: string): void {
	if (outcome) note(ctx, outcome);
	ctx.req.socket.destroy();
}

export function sendJson(
	ctx: RequestContext,
	status: number,
	payload: unknown,
	headers: Record<string, string> = {},
): void {
	const text = JSON.stringify(payload);
	if (ctx.fault?.kind === 'cut-after-accept') {
		// The work is done (a task may exist now); only the answer is lost.
		cut(ctx, ctx.entry.outcome === 'task-created' ? 'accepted-then-cut' : 'handled-then-cut');
		return;
	}
	const bytes = Buffer.from(text);
	ctx.res.writeHead(status, {
		'Content-Type': 'application/json; charset=utf-8',
		'Content-Length': String(bytes.length),
		...headers,
	});
	if (ctx.fault?.kind === 'cut-mid-body' || ctx.fault?.kind === 'sse-cut') {
		// sse-cut on a non-streamed answer acts like cut-mid-body.
		const keep = Math.min(ctx.fault.afterBytes ?? Math.floor(bytes.length / 2), bytes.length - 1);
		ctx.res.write(bytes.subarray(0, Math.max(0, keep)), () => cut(ctx, 'fault:cut-mid-body'));
		return;
	}
	ctx.res.end(bytes);
}

/**
 * `{"error":{"message"}}`; in the new-api personality new-api's wrapped shape, with a `type`
 * (`invalid_request_error` as its relay and task router answer refusals; `new_api_error` for its own 5xx).
 */
export function sendError(
	ctx: RequestContext,
	status: number,
	message: string,
	headers: Record<string, string> = {},
): void {
	ctx.entry.error = message;
	const error =
		ctx.personality === 'new-api'
			? { message, type: status >= 500 ? 'new_api_error' : 'invalid_request_error' }
			: { message };
	sendJson(ctx, status, { error }, headers);
}

/** A status with no body and no Content-Type at all (new-api's in-memory rate limiter: a bare 429). */
export function sendBare(ctx: RequestContext, status: number, headers: Record<string, string> = {}): void {
	if (ctx.fault?.kind === 'cut-after-accept') return cut(ctx, 'handled-then-cut');
	ctx.res.writeHead(status, { 'Content-Length': '0', ...headers });
	ctx.res.end();
}

/** Resolves when the response can take more data, or when it closed (then `res.destroyed` is true). */
function drained(ctx: RequestContext): Promise<void> {
	return new Promise((resolve) => {
		const done = () => {
			ctx.res.off('drain', done);
			ctx.res.off('close', done);
			resolve();
		};
		ctx.res.on('drain', done);
		ctx.res.on('close', done);
	});
}

/**
 * Streams a binary body with backpressure (never buffered whole), hashing what is actually sent.
 * The sha256 and byte count land in the log entry once the body is complete.
 */
export async function sendStream(
	ctx: RequestContext,
	status: number,
	headers: Record<string, string>,
	source: AsyncIterable<Buffer> | Iterable<Buffer>,
	onComplete?: (sha256: string, bytes: number) => void,
	/** Called with each source chunk once the socket no longer needs it (lets the source reuse buffers). */
	release?: (chunk: Buffer) => void,
): Promise<void> {
	if (ctx.fault?.kind === 'cut-after-accept') return cut(ctx, 'handled-then-cut');
	const total = Number(headers['Content-Length'] ?? -1);
	const limit =
		ctx.fault?.kind === 'cut-mid-body' || ctx.fault?.kind === 'sse-cut'
			? (ctx.fault.afterBytes ?? Math.floor(total / 2))
			: Infinity;
	const hash = createHash('sha256');
	let sent = 0;
	ctx.res.writeHead(status, headers);
	try {
		for await (const chunk of source) {
			const part = chunk.length > limit - sent ? chunk.subarray(0, limit - sent) : chunk;
			sent += part.length;
			hash.update(part);
			const more = ctx.res.write(part, () => release?.(chunk));
			if (sent >= limit) {
				// Let the partial body reach the client, then drop the connection.
				await new Promise<void>((resolve) => ctx.res.write(Buffer.alloc(0), () => resolve()));
				cut(ctx, 'fault:cut-mid-body');
				break;
			}
			if (!more) await drained(ctx);
			if (ctx.res.destroyed) break;
		}
	} catch {
		// The source failed; drop the connection so the client sees a short body.
		cut(ctx, 'source-error');
	}
	ctx.entry.bytes = sent;
	if (ctx.res.destroyed) {
		if (!ctx.entry.outcome) note(ctx, 'client-aborted');
		return;
	}
	ctx.res.end();
	if (sent === total) {
		const sha = hash.digest('hex');
		ctx.entry.sha256 = sha;
		onComplete?.(sha, sent);
	}
}
