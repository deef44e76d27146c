import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { SNIFF_BYTES, peekStream } from './binary';
import { BoxWalker, contentLength, contentRange, isIsoMedia, resumeInfo } from './integrity';
import { forStore, readableClassOf, STORE_CHUNK_BYTES } from './largeChunks';
import { listen } from './streamEvents';
import { asNodeError } from '../transport/errors';
import { brokenBodyRetryDelay } from '../transport/retry';
import { waitFor } from '../transport/transport';
import type { Readable, StreamResponse } from '../transport/transport';

/**
 * The one checked download of a file into n8n's binary data (Video's artifacts, Image's URLs). Every answer's first
 * bytes are judged by the caller before anything is stored (a page or an error is never the file); the bytes are
 * counted against Content-Length / Content-Range and an mp4's own box sizes; a body that breaks or ends early is
 * fetched again (bounded: brokenBodyRetryDelay), from the byte where it stopped when the server offered
 * `Accept-Ranges: bytes` with a strong ETag (sent back as If-Range), else from the start. A resumed body is appended
 * to the same stored stream: n8n's prepareBinaryData reads one stream, which is fed across attempts.
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
}

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
	resumable = false;
	private readonly walker?: BoxWalker;
	private readonly sink: Readable;
	private readonly done: Promise<IBinaryData>;
	private wake?: () => void;

	constructor(ctx: IExecuteFunctions, like: Readable, head: Buffer, fileName: string, mimeType: string) {
		const Type = readableClassOf(like);
		if (!Type) throw new Error('The download is not a readable stream');
		if (isIsoMedia(head)) this.walker = new BoxWalker();
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
		const { ranges, etag } = resumeInfo(response.headers);
		this.resumable = ranges && etag !== undefined;
		this.etag = etag;
	}

	/** A 206 that continues this file exactly where it stopped. */
	continues(response: StreamResponse): boolean {
		const range = response.statusCode === 206 ? contentRange(response.headers) : undefined;
		if (!range || range.first !== this.received) return false;
		return this.total === undefined || range.total === undefined || range.total === this.total;
	}

	private append(chunk: Buffer): boolean {
		this.received += chunk.length;
		this.walker?.feed(chunk);
		return this.sink.push(chunk);
	}

	/** Copies one answer's body into the store; resolves at its end, rejects when it breaks or the store fails. */
	async pump(response: StreamResponse, whole?: Buffer): Promise<void> {
		const announced = expectedBodyBytes(response);
		const before = this.received;
		if (whole) this.append(whole);
		else await this.copy(forStore(response.body));
		const got = this.received - before;
		// Fewer bytes than announced, without an error. (A body the HTTP client inflated, from a server that compressed
		// although identity was asked for, differs from its announced length too: an mp4 whose boxes all ended is whole.)
		if (announced !== undefined && got < announced && !this.walker?.complete()) {
			throw new EndedEarly(`the body ended after ${got} of the ${announced} bytes announced`);
		}
	}

	private async copy(source: Readable): Promise<void> {
		await new Promise<void>((resolve, reject) => {
			const cleanup = () => {
				stop();
				this.wake = undefined;
			};
			const stop = listen(source, {
				data: (chunk: Buffer | string) => {
					if (!this.append(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) {
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

	/** Why the file is not whole yet, or undefined. */
	missing(): string | undefined {
		if (this.total !== undefined && this.received < this.total && !this.walker?.complete()) {
			return `${this.received} of the ${this.total} bytes arrived`;
		}
		return this.walker?.verdict();
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

/** Streams a file into n8n's binary data, checked and resumed as described above. */
export async function downloadChecked(ctx: IExecuteFunctions, spec: CheckedDownload): Promise<IBinaryData> {
	let response = await spec.open();
	let file: StoredFile | undefined;
	for (let attempt = 1; ; attempt++) {
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
			await file.pump(response, whole);
			const missing = file.missing();
			if (missing !== undefined) throw new EndedEarly(missing);
			response.close();
			return await file.finish();
		} catch (error) {
			response.close();
			if (!isBrokenBody(ctx, error)) {
				await file?.abandon();
				throw asNodeError(ctx, error instanceof StoreFailed ? error.original : error, spec.itemIndex);
			}
			const reason = (error as Error)?.message ?? String(error);
			const delay = brokenBodyRetryDelay(attempt);
			if (delay === undefined) {
				await file?.abandon();
				const what = error instanceof EndedEarly ? 'the body ended' : 'the connection broke';
				const message = `Downloading ${spec.name} failed: ${what} before the whole file arrived (${reason})`;
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
			}
		}
	}
}

/** The next answer: the rest of the file from byte `from` (a 206, or a 200 when the file changed), or all of it. */
async function reopen(
	ctx: IExecuteFunctions,
	spec: CheckedDownload,
	file: StoredFile | undefined,
	from: number,
): Promise<StreamResponse> {
	if (from === 0 || !file?.etag) return await spec.open();
	const next = await spec.open({ start: from, etag: file.etag });
	if (next.statusCode === 200 || file.continues(next)) return next;
	// A 206 of some other range: not used; the whole file again.
	ctx.logger.warn(`Gen Gateway: download of ${spec.name} answered ${next.statusCode} to a resume; from the start`);
	next.close();
	return await spec.open();
}
