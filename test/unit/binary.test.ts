import http, { type IncomingMessage } from 'http';
import type { AddressInfo } from 'net';
import { Readable } from 'stream';
import type { IExecuteFunctions } from 'n8n-workflow';

import { decodeDataUrl, describeBytes, detectMediaType, fileNameWithExtension, peekStream, toBinary } from '../../nodes/shared/binary/binary';
import { STORE_CHUNK_BYTES } from '../../nodes/shared/binary/largeChunks';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(12, 7)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(8)]);
const ftyp = (brand: string) =>
	Buffer.concat([Buffer.from([0, 0, 0, 32]), Buffer.from('ftyp'), Buffer.from(brand, 'latin1'), Buffer.alloc(20)]);
const MP4 = ftyp('isom');

describe('detectMediaType', () => {
	it.each([
		['png', PNG, 'image/png', 'png'],
		['jpeg', JPEG, 'image/jpeg', 'jpg'],
		['gif', GIF, 'image/gif', 'gif'],
		['webp', WEBP, 'image/webp', 'webp'],
		['mp4 (isom)', MP4, 'video/mp4', 'mp4'],
		['mp4 (mp42)', ftyp('mp42'), 'video/mp4', 'mp4'],
		['avif (not a video despite ftyp)', ftyp('avif'), 'image/avif', 'avif'],
		['quicktime', ftyp('qt  '), 'video/quicktime', 'mov'],
	])('recognises %s from its first bytes', (_name, bytes, mimeType, extension) => {
		expect(detectMediaType(bytes)).toEqual({ mimeType, extension });
	});

	it.each([
		['bmp', Buffer.concat([Buffer.from('BM'), Buffer.from([0x36, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0])]), 'image/bmp', 'bmp'],
		['tiff (little-endian)', Buffer.concat([Buffer.from('II*\0'), Buffer.alloc(8)]), 'image/tiff', 'tif'],
		['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml', 'svg'],
		['svg after a prolog and a comment', Buffer.from('<?xml version="1.0"?>\n<!-- made by x -->\n<svg width="1">'), 'image/svg+xml', 'svg'],
	])('recognises %s', (_name, bytes, mimeType, extension) => {
		expect(detectMediaType(bytes)).toEqual({ mimeType, extension });
	});

	it('recognises nothing in text, in a RIFF that is not WEBP, or in too few bytes', () => {
		expect(detectMediaType(Buffer.from('{"error":{"message":"nope"}}'))).toBeUndefined();
		expect(detectMediaType(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE')]))).toBeUndefined();
		expect(detectMediaType(PNG.subarray(0, 4))).toBeUndefined();
		expect(detectMediaType(Buffer.alloc(0))).toBeUndefined();
	});
});

describe('fileNameWithExtension', () => {
	it('adds the extension only to a name without one', () => {
		expect(fileNameWithExtension('image-1', 'png')).toBe('image-1.png');
		expect(fileNameWithExtension('clip.mp4', 'mp4')).toBe('clip.mp4');
		expect(fileNameWithExtension('task_abc', undefined)).toBe('task_abc');
	});
});

/** A stream that hands out its bytes in small pieces, asynchronously, like a socket. */
function trickle(bytes: Buffer, pieceSize: number): Readable {
	let offset = 0;
	return new Readable({
		read() {
			setImmediate(() => {
				if (offset >= bytes.length) {
					this.push(null);
					return;
				}
				this.push(bytes.subarray(offset, offset + pieceSize));
				offset += pieceSize;
			});
		},
	});
}

async function drain(stream: Readable): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of stream) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks);
}

describe('peekStream', () => {
	it('reads the head across several small chunks and leaves the stream whole', async () => {
		const body = Buffer.concat([PNG, Buffer.alloc(100_000, 9)]);
		const stream = trickle(body, 3);
		const { head, ended } = await peekStream(stream, 16);
		expect(ended).toBe(false);
		expect(head.length).toBeGreaterThanOrEqual(16);
		expect(head.subarray(0, 16)).toEqual(body.subarray(0, 16));
		expect((await drain(stream)).equals(body)).toBe(true);
	});

	it('returns a body shorter than the head as ended, all in head', async () => {
		const stream = trickle(Buffer.from('tiny'), 2);
		const { head, ended } = await peekStream(stream, 16);
		expect(ended).toBe(true);
		expect(head.toString()).toBe('tiny');
	});

	it('rejects when the stream fails before the head is complete', async () => {
		const stream = new Readable({
			read() {
				setImmediate(() => this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
			},
		});
		await expect(peekStream(stream, 16)).rejects.toThrow('aborted');
	});
});

/** Only what toBinary uses of the execution context: prepareBinaryData, recording what it was given. */
function recordingContext() {
	const calls: Array<{ bytes: Buffer; fileName?: string; mimeType?: string }> = [];
	const ctx = {
		helpers: {
			prepareBinaryData: async (data: Buffer | Readable, fileName?: string, mimeType?: string) => {
				const bytes = Buffer.isBuffer(data) ? data : await drain(data);
				calls.push({ bytes, fileName, mimeType });
				return { data: bytes.toString('base64'), mimeType: mimeType ?? '', fileName };
			},
		},
	} as unknown as IExecuteFunctions;
	return { ctx, calls };
}

describe('toBinary', () => {
	it('names a buffer by its detected type, whatever the hint says', async () => {
		const { ctx, calls } = recordingContext();
		const binary = await toBinary(ctx, JPEG, { fileName: 'image-1', mimeType: 'image/png' });
		expect(binary.mimeType).toBe('image/jpeg');
		expect(calls).toEqual([{ bytes: JPEG, fileName: 'image-1.jpg', mimeType: 'image/jpeg' }]);
	});

	it('passes a stream on whole after sniffing it', async () => {
		const { ctx, calls } = recordingContext();
		const body = Buffer.concat([MP4, Buffer.alloc(300_000, 5)]);
		await toBinary(ctx, trickle(body, 1000), { fileName: 'task_1' });
		expect(calls[0].fileName).toBe('task_1.mp4');
		expect(calls[0].mimeType).toBe('video/mp4');
		expect(calls[0].bytes.equals(body)).toBe(true);
	});

	it('falls back to the hint (without parameters), then to application/octet-stream', async () => {
		const { ctx, calls } = recordingContext();
		await toBinary(ctx, Buffer.from('plain words here, long enough'), { fileName: 'a', mimeType: 'image/webp; q=1' });
		await toBinary(ctx, trickle(Buffer.from('??'), 1), { fileName: 'b' });
		expect(calls.map((c) => [c.fileName, c.mimeType])).toEqual([
			['a.webp', 'image/webp'],
			['b', 'application/octet-stream'],
		]);
		expect(calls[1].bytes.toString()).toBe('??');
	});
});

describe('describeBytes', () => {
	it('names what came back in words a user can act on', () => {
		expect(describeBytes(Buffer.alloc(0))).toBe('an empty body');
		expect(describeBytes(Buffer.from('<!doctype html><title>Login</title>'))).toBe('an HTML page: "<!doctype html><title>Login</title>"');
		expect(describeBytes(Buffer.from('  {"error": "x"}\n'))).toBe('JSON: "{"error": "x"}"');
		expect(describeBytes(Buffer.from('Access denied'))).toBe('text: "Access denied"');
		expect(describeBytes(MP4)).toBe('a video/mp4 file');
		expect(describeBytes(Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8]), 9)).toBe('9 bytes of an unknown binary type (starting 00 01 02 03 04 05 06 07)');
		expect(describeBytes(Buffer.from('x'.repeat(400)))).toMatch(/^text: "x{160}…"$/);
	});
});

describe('decodeDataUrl', () => {
	it('decodes base64 and percent-encoded data URLs, with their declared type', () => {
		expect(decodeDataUrl(`data:image/png;base64,${PNG.toString('base64')}`)).toEqual({ bytes: PNG, mimeType: 'image/png' });
		expect(decodeDataUrl('data:,hello%20world')).toEqual({ bytes: Buffer.from('hello world'), mimeType: undefined });
		expect(decodeDataUrl('DATA:image/gif;BASE64,R0lGODlh')?.bytes.subarray(0, 6).toString()).toBe('GIF89a');
	});

	it('is undefined for anything else', () => {
		expect(decodeDataUrl('https://cdn.example/x.png')).toBeUndefined();
		expect(decodeDataUrl('data:image/png;base64')).toBeUndefined();
	});
});

describe('toBinary with expectImage', () => {
	const expectImage = { what: 'Image 1', where: 'its URL answered 200 with', itemIndex: 0 };
	const failingContext = () => ({ ...recordingContext().ctx, getNode: () => ({ name: 'Image' }) }) as unknown as IExecuteFunctions;

	it('refuses an HTML page streamed with an image Content-Type, naming it', async () => {
		await expect(
			toBinary(failingContext(), trickle(Buffer.from('<html><body>Not found</body></html>'), 7), {
				fileName: 'image-1',
				mimeType: 'image/png',
				expectImage,
			}),
		).rejects.toThrow('Image 1 is not an image: its URL answered 200 with an HTML page: "<html><body>Not found</body></html>" (Content-Type image/png)');
	});

	it('accepts bytes it cannot name when the Content-Type says image (a format it does not know)', async () => {
		const { ctx, calls } = recordingContext();
		const jxl = Buffer.from([0xff, 0x0a, 0xfa, 0x7f, 0x01, 0x90, 0x08, 0x06]);
		await toBinary(ctx, jxl, { fileName: 'image-1', mimeType: 'image/jxl', expectImage });
		expect(calls[0].mimeType).toBe('image/jxl');
	});

	/** The chunk sizes prepareBinaryData reads, for a PNG of 3 MiB served over loopback HTTP in 64 KiB writes. */
	async function storedChunkSizes(shape: (response: IncomingMessage) => Readable) {
		const body = Buffer.concat([PNG, Buffer.alloc(3 * STORE_CHUNK_BYTES, 1)]);
		const server = http.createServer((_request, response) => trickle(body, 64 * 1024).pipe(response));
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const { port } = server.address() as AddressInfo;
			const response = await new Promise<IncomingMessage>((resolve, reject) =>
				http.get(`http://127.0.0.1:${port}/`, resolve).on('error', reject),
			);
			const sizes: number[] = [];
			const stored: Buffer[] = [];
			const ctx = {
				helpers: {
					prepareBinaryData: async (data: Readable) => {
						for await (const chunk of data) {
							sizes.push((chunk as Buffer).length);
							stored.push(chunk as Buffer);
						}
						return { data: '', mimeType: 'image/png' };
					},
				},
			} as unknown as IExecuteFunctions;
			await toBinary(ctx, shape(response), { fileName: 'image-1', expectImage });
			expect(Buffer.concat(stored).equals(body)).toBe(true);
			return sizes;
		} finally {
			server.close();
		}
	}

	it("regroups n8n 1.x's stream (the socket's own IncomingMessage) into large chunks for the store", async () => {
		const sizes = await storedChunkSizes((response) => response);
		expect(Math.max(...sizes)).toBeGreaterThanOrEqual(STORE_CHUNK_BYTES);
	});

	it("passes n8n 2.x's stream (axios's wrapper around the socket) to the store unchanged", async () => {
		// axios 1.18+ with a maxContentLength: Readable.from over an async generator that counts the socket's chunks.
		const sizes = await storedChunkSizes((response) =>
			Readable.from(
				(async function* counted() {
					for await (const chunk of response) yield chunk as Buffer;
				})(),
				{ objectMode: false },
			),
		);
		expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024);
	});
});
