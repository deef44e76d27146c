import { createHash, randomBytes } from 'crypto';
import { EventEmitter } from 'events';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { PassThrough, Readable } from 'stream';

import { STORE_CHUNK_BYTES, withLargeChunks } from '../../nodes/shared/binary/largeChunks';

const KiB = 1024;
const MiB = 1024 * KiB;

async function collect(stream: AsyncIterable<Buffer>): Promise<Buffer[]> {
	const chunks: Buffer[] = [];
	for await (const chunk of stream) chunks.push(chunk);
	return chunks;
}

const sha = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');

describe('withLargeChunks: the bytes n8n stores, in chunks of about 1 MiB', () => {
	it('regroups 64 KiB chunks into 1 MiB ones, the rest last, bytes unchanged', async () => {
		const parts = Array.from({ length: 40 }, () => randomBytes(64 * KiB));
		const out = await collect(withLargeChunks(Readable.from(parts)));
		expect(out.map((chunk) => chunk.length)).toEqual([STORE_CHUNK_BYTES, STORE_CHUNK_BYTES, 8 * 64 * KiB]);
		expect(sha(Buffer.concat(out))).toBe(sha(Buffer.concat(parts)));
	});

	it('passes a chunk that is already large enough as it is (no copy)', async () => {
		const big = randomBytes(2 * STORE_CHUNK_BYTES);
		const out = await collect(withLargeChunks(Readable.from([big])));
		expect(out).toHaveLength(1);
		expect(out[0]).toBe(big);
	});

	it('is a byte stream n8n can read either way (events or iteration), from a real HTTP response', async () => {
		const body = randomBytes(3 * STORE_CHUNK_BYTES + 12345);
		const server = http.createServer((_, res) => res.end(body));
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const { port } = server.address() as AddressInfo;
			const response = await new Promise<http.IncomingMessage>((resolve) => http.get(`http://127.0.0.1:${port}/`, resolve));
			const stream = withLargeChunks(response);
			expect(stream).not.toBe(response);
			expect(stream.readableObjectMode).toBe(false);
			const received: Buffer[] = [];
			await new Promise<void>((resolve, reject) => {
				stream.on('data', (chunk: Buffer) => received.push(chunk));
				stream.on('end', resolve);
				stream.on('error', reject);
			});
			expect(sha(Buffer.concat(received))).toBe(sha(body));
			expect(received.slice(0, -1).every((chunk) => chunk.length >= STORE_CHUNK_BYTES)).toBe(true);
		} finally {
			server.close();
		}
	});

	it('finds the Readable class through a Duplex (e.g. a decompressing stream)', async () => {
		const source = new PassThrough();
		const stream = withLargeChunks(source, 8);
		expect(stream.readableObjectMode).toBe(false);
		source.end(Buffer.from('0123456789abcdef0123'));
		expect(Buffer.concat(await collect(stream)).toString()).toBe('0123456789abcdef0123');
	});

	it('ends with the source error when the connection breaks mid-way', async () => {
		const broken = new Error('socket hang up');
		const source = new PassThrough();
		const stream = withLargeChunks(source, STORE_CHUNK_BYTES);
		source.write(randomBytes(64 * KiB));
		setImmediate(() => source.destroy(broken));
		await expect(collect(stream)).rejects.toBe(broken);
	});

	it('stops reading the source when the store gives up', async () => {
		const source = new PassThrough();
		const stream = withLargeChunks(source, 4);
		source.write(Buffer.from('abcdefgh'));
		const iterator = stream[Symbol.asyncIterator]();
		expect((await iterator.next()).value.toString()).toBe('abcdefgh');
		await iterator.return!();
		expect(source.destroyed).toBe(true);
	});

	it('reads ahead while the consumer is busy, within a bounded buffer', async () => {
		const source = new PassThrough({ highWaterMark: 64 * KiB });
		const stream = withLargeChunks(source, 256 * KiB);
		let written = 0;
		const writeAll = async () => {
			for (let i = 0; i < 64; i++) {
				written += 64 * KiB;
				if (!source.write(randomBytes(64 * KiB))) await new Promise((resolve) => source.once('drain', resolve));
			}
			source.end();
		};
		const writing = writeAll();
		await new Promise((resolve) => setTimeout(resolve, 50));
		// Nobody consumed yet: the source flowed into the regrouping stream until its buffer was full, then stopped.
		expect(written).toBeGreaterThanOrEqual(256 * KiB);
		expect(written).toBeLessThan(4 * MiB);
		expect(Buffer.concat(await collect(stream)).length).toBe(64 * 64 * KiB);
		await writing;
	});

	it('leaves a stream alone when Node’s Readable cannot be found behind it', () => {
		const odd = new EventEmitter() as unknown as Readable;
		expect(withLargeChunks(odd)).toBe(odd);
	});
});
