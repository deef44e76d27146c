import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { SNIFF_BYTES, peekStream } from './binary';
import { contentLength, contentRange, isEncoded, isFramed, resumeInfo, structureOf, validatorsOf } from './integrity';
import type { FileStructure } from './integrity';
import { forStore, readableClassOf, STORE_CHUNK_BYTES } from './largeChunks';
import { listen } from './streamEvents';
import { minutesText } from '../descriptions/timeoutOption';
import { asNodeError } from '../transport/errors';
import { boundRanOut, idleWatch } from '../transport/idleWatch';
import { brokenBodyRetryDelay } from '../transport/retry';
import { waitFor } from '../transport/transport';
import type { Readable, StreamResponse } from '../transport/transport';

/**
 * The one checked download of a file into n8n's binary data (Video's artifacts, Image's URLs). Every answer's first
 * bytes are judged by the caller before anything is stored (a page or an error is never the file); the bytes are
 * counted against Content-Length / Content-Range and the file's own structure (integrity.ts: an mp4's boxes, an
 * image's end); a body that breaks or ends early is fetched again (bounded: brokenBodyRetryDelay), from the byte
 * where it stopped when the server offered `Accept-Ranges: bytes` with a strong ETag (sent back as If-Range), else
 * from the start. A resumed body is appended to the same stored stream (n8n's prepareBinaryData reads one stream, fed
 * across attempts) only when it is provably the same file: a 206 with the first answer's validators and a
 * Content-Range that starts at the resume byte and names the same total; anything else (another ETag, a 416, a
 * range that does not fit) starts over from byte 0. An answer that sends more bytes than it announced is never
 * appended. A body silent for `timeoutMs` (headers and first bytes arrived, then nothing) ends the download, and so
 * does one still not whole after its total bound (issue 51, 6: one byte every few seconds never lets the idle bound run
 * out), counted from the first answer over every attempt. Either way nothing is stored.
 */

export interface ResumeFrom {
	start: number;
	etag: string;
}

interface CheckedDownload {
	/** Sends the request: for the whole file, or (resuming) for the bytes from `range.start` on. */
	open(range?: ResumeFrom): Promise<StreamResponse>;
	/**
	 * The name and type to store under, from the first bytes (`totalKnown`: the body's size when it is all in `head`);
	 * throws a NodeOperationError when they are not the file (an HTML page, a JSON error, nothing).
	 */
	accept(
		head: Buffer,
		response: StreamResponse,
		totalKnown: number | undefined,
	): Promise<{ fileName: string; mimeType: string }>;
	/** The file, for messages ("image-1", "task_1.mp4"). */
	name: string;
	itemIndex: number;
	/** How long a body may stay silent once it began (the node's Timeout); default: the socket's 120 s. */
	timeoutMs?: number;
	/** How the user raises `timeoutMs` (the node's Timeout option), when it is the node's. */
	timeoutAdvice?: string;
	/** The bound on the whole download: its length, the option that sets it and how to raise it; default 30 min. */
	total?: TotalLimit;
}

interface TotalLimit {
	ms: number;
	/** The option as the error names it ("Max Download Time"), or undefined when there is none to raise. */
	option?: string;
	advice?: string;
}

const DEFAULT_IDLE_MS = 120_000;
/**
 * A download's total bound where the node has no option for it (a video): 30 minutes, the most a task is waited for.
 * Not the item's Max Wait: a short Max Wait would then cut a download that works today.
 */
const DEFAULT_TOTAL_MS = 30 * 60_000;
const DEFAULT_TOTAL_ADVICE =
	'A download of a video may take 30 minutes in all; a host this slow or one that never ends the file is hung up on ' +
	'there. "Download" with the Task ID tries again.';

/** The request headers of a binary download: the bytes as stored (no compression), from `range.start` when resuming. */
export function downloadHeaders(range?: ResumeFrom): Record<string, string> {
	const headers: Record<string, string> = { 'Accept-Encoding': 'identity' };
	if (range) {
		headers.Range = `bytes=${range.start}-`;
		headers['If-Range'] = range.etag;
	}
	return headers;
}

/** A body that ended without an error but short of what was announced (or of its own structure). */
class EndedEarly extends Error {}

/** An answer that sent more bytes than it announced: never appended, and its ranges are not trusted again. */
class TooLong extends Error {}

/** n8n's store failed (a full disk…): not the network, so not retried. */
class StoreFailed extends Error {
	constructor(readonly original: unknown) {
		super((original as Error)?.message ?? String(original));
	}
}

/** The stored file being written: one stream for n8n's store, fed by one or more answers in turn. */
class StoredFile {
	received = 0;
	/** The whole file's size, when an answer said it. */
	total?: number;
	etag?: string;
	lastModified?: string;
	resumable = false;
	/** The last answer said where its body ends (a length, or chunked framing). */
	private framed = true;
	private structure?: FileStructure;
	/**
	 * The first bytes while they are too few to tell the file's structure (a first answer cut within them): the
	 * structure is chosen once they are, and fed them (found by the download property: an mp4 without moov, its first
	 * answer cut after one byte, was stored whole after the resume).
	 */
	private pending?: Buffer;
	private readonly sink: Readable;
	private readonly done: Promise<IBinaryData>;
	private wake?: () => void;

	constructor(ctx: IExecuteFunctions, like: Readable, head: Buffer, fileName: string, mimeType: string) {
		const Type = readableClassOf(like);
		if (!Type) throw new Error('The download is not a readable stream');
		if (head.length >= STRUCTURE_HEAD_BYTES) this.structure = structureOf(head);
		else this.pending = Buffer.alloc(0);
		this.sink = new Type({
			highWaterMark: STORE_CHUNK_BYTES,
			read: () => {
				const wake = this.wake;
				this.wake = undefined;
				wake?.();
			},
			destroy: (error, callback) => callback(error),
		});
		// A sink destroyed after n8n's store stopped listening (it had read all it wanted) must not become an uncaught
		// 'error' event that takes the process down: the store's own listener still sees the error while it reads.
		this.sink.on('error', () => undefined);
		this.done = ctx.helpers.prepareBinaryData(this.sink, fileName, mimeType);
		// Observed at once: a store abandoned for a restart rejects with nobody else waiting on it.
		this.done.catch(() => undefined);
	}

	/** Takes what an answer says about the whole file: its size, and whether it can be continued from a byte. */
	describe(response: StreamResponse): void {
		const range = response.statusCode === 206 ? contentRange(response.headers) : undefined;
		this.total = range ? range.total : contentLength(response.headers);
		const { ranges } = resumeInfo(response.headers);
		const { etag, lastModified } = validatorsOf(response.headers);
		// A decoded body's byte offsets are not the server's: it cannot be continued from one.
		this.resumable = ranges && etag !== undefined && !isEncoded(response.headers);
		this.etag = etag;
		this.lastModified = lastModified;
	}

	/**
	 * A 206 that continues this file exactly where it stopped: the first answer's validators (its ETag, and its
	 * Last-Modified when both name one), a range starting at the resume byte, and the same total when it was known.
	 */
	continues(response: StreamResponse): boolean {
		const range = response.statusCode === 206 ? contentRange(response.headers) : undefined;
		if (!range || range.first !== this.received) return false;
		if (this.total !== undefined && range.total !== this.total) return false;
		if (range.total !== undefined && range.last >= range.total) return false;
		const { etag, lastModified } = validatorsOf(response.headers);
		if (this.etag === undefined || etag !== this.etag) return false;
		return this.lastModified === undefined || lastModified === undefined || lastModified === this.lastModified;
	}

	/** A continuing 206 names the whole file's size, when the first answer did not (a chunked body). */
	learnTotal(response: StreamResponse): void {
		this.total ??= contentRange(response.headers)?.total;
	}

	private append(chunk: Buffer): boolean {
		this.received += chunk.length;
		if (this.pending) {
			this.pending = Buffer.concat([this.pending, chunk]);
			if (this.pending.length >= STRUCTURE_HEAD_BYTES) {
				this.structure = structureOf(this.pending);
				this.structure?.feed(this.pending);
				this.pending = undefined;
			}
		} else this.structure?.feed(chunk);
		return this.sink.push(chunk);
	}

	/**
	 * Copies one answer's body into the store; resolves at its end, rejects when it breaks, sends more than it
	 * announced, or the store fails. `touch` is called for every chunk (the idle watch).
	 */
	async pump(response: StreamResponse, whole: Buffer | undefined, touch: () => void): Promise<void> {
		const announced = expectedBodyBytes(response);
		const before = this.received;
		// At most what the answer announced, and never past the whole file's size; a decoded body (a server that
		// compressed although identity was asked for) is judged by its structure instead.
		const room = this.total === undefined ? undefined : this.total - before;
		const limits = [announced, room].filter((limit): limit is number => limit !== undefined);
		const limit = isEncoded(response.headers) || limits.length === 0 ? undefined : Math.min(...limits);
		this.framed = announced !== undefined || isFramed(response.headers);
		if (whole) {
			if (limit !== undefined && whole.length > limit) throw tooLong(limit);
			this.append(whole);
		} else await this.copy(forStore(response.body), limit, touch);
		const got = this.received - before;
		// Fewer bytes than announced, without an error: a framed body cut short ends with an error instead, so this is a
		// body the HTTP client inflated (a server that compressed although identity was asked for; the client may drop
		// its Content-Encoding): whole when its structure is.
		if (announced !== undefined && got < announced && !this.structure?.complete()) {
			throw new EndedEarly(`the body ended after ${got} of the ${announced} bytes announced`);
		}
	}

	private async copy(source: Readable, limit: number | undefined, touch: () => void): Promise<void> {
		const before = this.received;
		await new Promise<void>((resolve, reject) => {
			const cleanup = () => {
				stop();
				this.wake = undefined;
			};
			const stop = listen(source, {
				data: (piece: Buffer | string) => {
					touch();
					const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece);
					if (limit !== undefined && this.received - before + chunk.length > limit) {
						cleanup();
						reject(tooLong(limit));
						return;
					}
					if (!this.append(chunk)) {
						source.pause();
						this.wake = () => source.resume();
					}
				},
				end: () => {
					cleanup();
					resolve();
				},
				error: (error: Error) => {
					cleanup();
					reject(error);
				},
				close: () => {
					if (source.readableEnded) return;
					cleanup();
					reject(new Error('The connection closed before the file was complete'));
				},
			});
			this.done.catch((error: unknown) => {
				cleanup();
				reject(new StoreFailed(error));
			});
		});
	}

	/**
	 * Why the file is not whole yet, or undefined. A body that ended with the connection, without a length or chunked
	 * framing, is whole only when its own structure shows it (an mp4's boxes, an image's end): a file of another kind,
	 * or cut before it could be recognised, cannot be told from a cut one.
	 */
	missing(): string | undefined {
		if (this.total !== undefined && this.received < this.total && !this.structure?.complete()) {
			return `${this.received} of the ${this.total} bytes arrived`;
		}
		const verdict = this.structure?.verdict();
		if (verdict !== undefined || this.framed) return verdict;
		if (this.structure?.complete()) return undefined;
		return `the body came without a length and ended after ${this.received} bytes, where nothing in it shows the file ends`;
	}

	async finish(): Promise<IBinaryData> {
		this.sink.push(null);
		return await this.done.then(undefined, async (error: unknown) => await Promise.reject(new StoreFailed(error)));
	}

	/** Drops what was stored so far (a restart, or a failure). */
	async abandon(): Promise<void> {
		this.sink.destroy(new Error('download abandoned'));
		await this.done.catch(() => undefined);
	}
}

const tooLong = (limit: number) => new TooLong(`an answer sent more than the ${limit} bytes it announced`);

/** The body bytes an answer announced: Content-Length, or a 206's range. */
function expectedBodyBytes(response: StreamResponse): number | undefined {
	const range = response.statusCode === 206 ? contentRange(response.headers) : undefined;
	return range ? range.last - range.first + 1 : contentLength(response.headers);
}

/** Errors that mean "the bytes did not all arrive": another attempt may get them. */
function isBrokenBody(ctx: IExecuteFunctions, error: unknown): boolean {
	if (ctx.getExecutionCancelSignal()?.aborted) return false;
	return !(error instanceof NodeApiError || error instanceof NodeOperationError || error instanceof StoreFailed);
}

/** What structureOf needs to tell a file's structure (an ISO media file's `ftyp` box, a WebP's RIFF size). */
const STRUCTURE_HEAD_BYTES = 12;

/** Streams a file into n8n's binary data, checked and resumed as described above. */
export async function downloadChecked(ctx: IExecuteFunctions, spec: CheckedDownload): Promise<IBinaryData> {
	const idleMs = spec.timeoutMs ?? DEFAULT_IDLE_MS;
	const totalMs = spec.total?.ms ?? DEFAULT_TOTAL_MS;
	let response = await spec.open();
	// From the first answer's headers on (a video's content may first answer "not ready" for a while).
	const started = Date.now();
	let file: StoredFile | undefined;
	for (let attempt = 1; ; attempt++) {
		// The request's own timeout may stop timing once the answer has begun (shared/transport/idleWatch.ts): a body
		// that goes silent is hung up on here, and the download ends with the timeout's error.
		const answer = response;
		const watch = idleWatch(idleMs, () => answer.close(), Math.max(0, started + totalMs - Date.now()));
		try {
			let whole: Buffer | undefined;
			if (!file) {
				const { head, ended } = await peekStream(response.body, SNIFF_BYTES);
				const { fileName, mimeType } = await spec.accept(head, response, ended ? head.length : undefined);
				if (head.length === 0) {
					throw new NodeOperationError(ctx.getNode(), `Not the file: ${spec.name} came as an empty body`, {
						itemIndex: spec.itemIndex,
					});
				}
				file = new StoredFile(ctx, response.body, head, fileName, mimeType);
				file.describe(response);
				// A body shorter than the sniffing window has already ended: it is all in `head`.
				if (ended) whole = head;
			}
			watch.touch();
			await file.pump(response, whole, () => watch.touch());
			watch.stop();
			const missing = file.missing();
			if (missing !== undefined) throw new EndedEarly(missing);
			response.close();
			return await file.finish();
		} catch (error) {
			watch.stop();
			response.close();
			// The socket's own idle time-out (the same Timeout) may fire a moment before the watch: a stall all the same.
			const ranOut = boundRanOut(watch, idleMs);
			if (ranOut && !ctx.getExecutionCancelSignal()?.aborted) {
				await file?.abandon();
				throw ranOut === 'total'
					? tooSlow(ctx, spec, totalMs, file?.received ?? 0)
					: stalled(ctx, spec, idleMs, file?.received ?? 0);
			}
			if (!isBrokenBody(ctx, error)) {
				await file?.abandon();
				throw asNodeError(ctx, error instanceof StoreFailed ? error.original : error, spec.itemIndex);
			}
			// A server that sent more than it announced is not trusted with a range again: the next try starts over.
			if (error instanceof TooLong && file) file.resumable = false;
			const reason = (error as Error)?.message ?? String(error);
			const delay = brokenBodyRetryDelay(attempt);
			if (delay === undefined) {
				await file?.abandon();
				const what =
					error instanceof EndedEarly
						? 'the body ended before the whole file arrived'
						: error instanceof TooLong
							? 'an answer held more bytes than it announced'
							: 'the connection broke before the whole file arrived';
				const message = `Downloading ${spec.name} failed: ${what} (${reason})`;
				throw new NodeOperationError(ctx.getNode(), message, {
					description: `Tried ${attempt} times.`,
					itemIndex: spec.itemIndex,
				});
			}
			const from = file?.resumable && file.received > 0 ? file.received : 0;
			ctx.logger.warn(
				`Gen Gateway: download of ${spec.name} broke (${reason}); retry ${attempt + 1} ` +
					(from > 0 ? `from byte ${from}` : 'from the start'),
			);
			// A cancelled wait or a failed request drops what was stored, like any other ending.
			const abandoned = async (failure: unknown) => {
				await file?.abandon();
				throw asNodeError(ctx, failure, spec.itemIndex);
			};
			await waitFor(ctx, delay).catch(abandoned);
			response = await reopen(ctx, spec, file, from).catch(abandoned);
			if (from === 0 || !file?.continues(response)) {
				// Started over: what was stored is dropped, and this answer is judged as a first one.
				await file?.abandon();
				file = undefined;
			} else file.learnTotal(response);
		}
	}
}

/** A body that went silent for the timeout after it began: not retried (it would wait as long again). */
function stalled(ctx: IExecuteFunctions, spec: CheckedDownload, idleMs: number, received: number) {
	const whose = spec.timeoutAdvice ? "the node's Timeout ran out" : 'its idle time-out ran out';
	return new NodeOperationError(
		ctx.getNode(),
		`Downloading ${spec.name} failed: nothing arrived for ${idleMs / 1000} s after byte ${received} (${whose})`,
		{
			description: `The file's host sent the start of the file, then nothing; nothing was stored. ${
				spec.timeoutAdvice ?? ''
			}`.trim(),
			itemIndex: spec.itemIndex,
		},
	);
}

/** A body still not whole after the download's total bound, however steadily it arrived: not retried either. */
function tooSlow(ctx: IExecuteFunctions, spec: CheckedDownload, totalMs: number, received: number) {
	const bound = spec.total?.option ? `the node's ${spec.total.option} ran out` : 'its total time bound ran out';
	return new NodeOperationError(
		ctx.getNode(),
		`Downloading ${spec.name} failed: it was not complete after ${minutesText(totalMs)} in all (${bound}); ${received} ` +
			'bytes had arrived',
		{
			description: `The file's host kept sending, too slowly to finish within the bound; nothing was stored. ${
				spec.total?.advice ?? DEFAULT_TOTAL_ADVICE
			}`.trim(),
			itemIndex: spec.itemIndex,
		},
	);
}

/** The server cannot serve the range asked for (416): the file changed or shrank; the resume starts over. */
const isRangeRefused = (error: unknown) => error instanceof NodeApiError && String(error.httpCode) === '416';

/**
 * The next answer: the rest of the file from byte `from` (a 206 that continues it, or a 200 when the file changed),
 * or all of it: from the start when there is nothing to continue, and when the resume was answered otherwise (a 206
 * of another file or range, a 416).
 */
async function reopen(
	ctx: IExecuteFunctions,
	spec: CheckedDownload,
	file: StoredFile | undefined,
	from: number,
): Promise<StreamResponse> {
	if (from === 0 || !file?.etag) return await spec.open();
	let next: StreamResponse;
	try {
		next = await spec.open({ start: from, etag: file.etag });
	} catch (error) {
		if (!isRangeRefused(error)) throw asNodeError(ctx, error, spec.itemIndex);
		ctx.logger.warn(`Gen Gateway: download of ${spec.name} answered 416 to a resume from byte ${from}; from the start`);
		return await spec.open();
	}
	if (next.statusCode === 200 || file.continues(next)) return next;
	// A 206 of another file (its validator changed) or of another range: not appended; the whole file again.
	ctx.logger.warn(
		`Gen Gateway: download of ${spec.name} answered ${next.statusCode} to a resume from byte ${from} that does not ` +
			'continue the same file (validator or Content-Range); from the start',
	);
	next.close();
	return await spec.open();
}
