import type { Readable } from '../transport/transport';

/**
 * n8n 1.x stores a binary stream with one awaited file write per chunk it reads, and a socket delivers 64 KiB chunks:
 * a 100 MB video took 1,600 serial writes, with the socket idle during each. Regrouped into about 1 MiB, and read on
 * while n8n writes, the same download is faster than curl's and cheaper in CPU (bench/README.md, benchmark 4), for
 * about 2 MiB of memory. On n8n 2.x the regrouping saves no measurable time and costs 20–46 MiB per download
 * (docs/performance.md, "At scale", case 4), so only the 1.x shape of stream is regrouped (forStore).
 */
export const STORE_CHUNK_BYTES = 1024 * 1024;

interface ReadableOptions {
	highWaterMark: number;
	read(this: Readable): void;
	destroy(this: Readable, error: Error | null, callback: (error?: Error | null) => void): void;
}

type ReadableClass = (new (options: ReadableOptions) => Readable) & { name: string };

/** Node's Readable class, reached through the stream itself: community nodes may not import 'stream'. */
export function readableClassOf(stream: Readable): ReadableClass | undefined {
	for (let type = stream.constructor as ReadableClass | null; type; type = Object.getPrototypeOf(type)) {
		if (type.name === 'Readable') return type;
	}
	return undefined;
}

/**
 * The stream to hand to n8n's binary store. n8n 1.x (axios there gets maxContentLength -1) hands over the response
 * itself, Node's IncomingMessage reading the socket: it is regrouped into large chunks. n8n 2.x hands over axios's
 * wrapper (a plain Readable that counts bytes against maxContentLength), and anything else without its own socket
 * (a decompressing stream, a test's stream) goes through unchanged.
 */
export function forStore(stream: Readable): Readable {
	return isSocketResponse(stream) ? withLargeChunks(stream) : stream;
}

/** Node's http.IncomingMessage, by its shape: a readable that carries the socket it reads and the status it got. */
function isSocketResponse(stream: Readable): boolean {
	const fields = stream as unknown as { socket?: unknown; statusCode?: unknown };
	return typeof fields.socket === 'object' && fields.socket !== null && typeof fields.statusCode === 'number';
}

/**
 * The same bytes as `stream`, in chunks of about `size`, for n8n's binary store. The source keeps flowing while
 * the consumer writes, until about `size` waits unread. Errors of the source (a cut connection, a cancelled
 * execution) end the new stream with the same error; destroying the new stream destroys the source.
 */
export function withLargeChunks(stream: Readable, size = STORE_CHUNK_BYTES): Readable {
	const Type = readableClassOf(stream);
	if (!Type) return stream;
	let parts: Buffer[] = [];
	let length = 0;
	const output = new Type({
		highWaterMark: size,
		read() {
			stream.resume();
		},
		destroy(error, callback) {
			stream.destroy();
			callback(error);
		},
	});
	const flush = (): boolean => {
		if (length === 0) return true;
		const chunk = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
		parts = [];
		length = 0;
		return output.push(chunk);
	};
	stream.on('data', (chunk: Buffer | string) => {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
		parts.push(buffer);
		length += buffer.length;
		if (length >= size && !flush()) stream.pause();
	});
	stream.once('end', () => {
		flush();
		output.push(null);
	});
	stream.once('error', (error: Error) => output.destroy(error));
	stream.once('close', () => {
		if (!stream.readableEnded) output.destroy(new Error('The connection closed before the file was complete'));
	});
	return output;
}
