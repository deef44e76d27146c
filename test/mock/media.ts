/**
 * Deterministic media: mp4-looking artifacts generated as streams (never held whole in memory) and tiny PNGs.
 * Same seed and size → same bytes, so a sha256 can be computed without storing anything.
 */
import { createHash } from 'crypto';
import { setTimeout as wait } from 'timers/promises';
import { deflateSync } from 'zlib';

const CHUNK = 64 * 1024;

/**
 * A real `ftyp` box (isom brand), an (empty) `moov` box, and an `mdat` box header covering the rest of the file: the
 * top level of a whole mp4 (a downloaded mp4 without `moov` and `mdat` is not stored).
 */
export function mp4Header(totalBytes: number): Buffer {
	const ftyp = Buffer.alloc(32);
	ftyp.writeUInt32BE(32, 0);
	ftyp.write('ftypisom', 4, 'latin1');
	ftyp.writeUInt32BE(0x200, 12);
	ftyp.write('isomiso2avc1mp41', 16, 'latin1');
	const moov = Buffer.alloc(8);
	moov.writeUInt32BE(8, 0);
	moov.write('moov', 4, 'latin1');
	const mdat = Buffer.alloc(8);
	mdat.writeUInt32BE(Math.min(Math.max(totalBytes - 40, 8), 0xffffffff), 0);
	mdat.write('mdat', 4, 'latin1');
	return Buffer.concat([ftyp, moov, mdat]);
}

/**
 * xorshift128 keystream seeded from the task: cheap, deterministic, and written into caller-owned buffers
 * (no allocation per chunk, so streaming a huge artifact leaves no garbage behind).
 */
class Keystream {
	private x: number;
	private y: number;
	private z: number;
	private w: number;

	constructor(seed: string) {
		const h = createHash('sha256').update(`artifact:${seed}`).digest();
		this.x = h.readUInt32LE(0) | 1;
		this.y = h.readUInt32LE(4);
		this.z = h.readUInt32LE(8);
		this.w = h.readUInt32LE(12);
	}

	/** Fills `buf` (length a multiple of 4 except for the very last chunk of a stream). */
	fill(buf: Buffer): void {
		const words = buf.length >>> 2;
		const view = new DataView(buf.buffer, buf.byteOffset, buf.length);
		let { x, y, z, w } = this;
		for (let i = 0; i < words; i++) {
			const t = x ^ (x << 11);
			x = y;
			y = z;
			z = w;
			w = w ^ (w >>> 19) ^ (t ^ (t >>> 8));
			view.setUint32(i << 2, w >>> 0, true);
		}
		for (let i = words << 2; i < buf.length; i++) buf[i] = (w >>> (8 * (i & 3))) & 0xff;
		Object.assign(this, { x, y, z, w });
	}
}

/** Reuses chunk buffers once the socket has taken them (see `release`), with a small cap. */
export class ChunkPool {
	private free: Buffer[] = [];

	constructor(readonly chunkSize: number) {}

	take(): Buffer {
		return this.free.pop() ?? Buffer.allocUnsafe(this.chunkSize);
	}

	release = (buf: Buffer): void => {
		if (buf.length === this.chunkSize && this.free.length < 32) this.free.push(buf);
	};
}

/**
 * Yields the artifact's bytes in chunks: the mp4 header, then the keystream. A yielded chunk is only valid until the
 * consumer hands it back to `pool.release` (or forever, without a pool).
 */
export function* artifactChunks(seed: string, totalBytes: number, pool: ChunkPool): Generator<Buffer> {
	const stream = new Keystream(seed);
	const header = mp4Header(totalBytes);
	let pos = 0;
	while (pos < totalBytes) {
		const n = Math.min(pool.chunkSize, totalBytes - pos);
		const buf = pool.take();
		const chunk = n === buf.length ? buf : buf.subarray(0, n);
		stream.fill(chunk);
		if (pos < header.length) header.copy(chunk, 0, pos, Math.min(header.length, pos + n));
		pos += n;
		yield chunk;
	}
}

/** The artifact as an async stream, optionally throttled to `bytesPerSecond`. */
export async function* artifactStream(
	seed: string,
	totalBytes: number,
	pool: ChunkPool,
	bytesPerSecond?: number,
): AsyncGenerator<Buffer> {
	if (!bytesPerSecond || bytesPerSecond <= 0) {
		yield* artifactChunks(seed, totalBytes, pool);
		return;
	}
	const started = Date.now();
	let sent = 0;
	for (const chunk of artifactChunks(seed, totalBytes, pool)) {
		const due = started + (sent * 1000) / bytesPerSecond;
		if (due > Date.now()) await wait(due - Date.now());
		sent += chunk.length;
		yield chunk;
	}
}

/**
 * Bytes [start, end) of the artifact, optionally throttled. The keystream is sequential, so the bytes before `start`
 * are generated and dropped (cheap: ~1 GB/s); only what is sent counts for the throttle.
 */
export async function* artifactRangeStream(
	seed: string,
	totalBytes: number,
	start: number,
	end: number,
	pool: ChunkPool,
	bytesPerSecond?: number,
): AsyncGenerator<Buffer> {
	const started = Date.now();
	let pos = 0;
	let sent = 0;
	for (const chunk of artifactChunks(seed, totalBytes, pool)) {
		const from = pos;
		pos += chunk.length;
		if (pos <= start) {
			pool.release(chunk);
			continue;
		}
		if (from >= end) {
			pool.release(chunk);
			break;
		}
		const part = chunk.subarray(Math.max(0, start - from), Math.min(chunk.length, end - from));
		if (bytesPerSecond && bytesPerSecond > 0) {
			const due = started + (sent * 1000) / bytesPerSecond;
			if (due > Date.now()) await wait(due - Date.now());
		}
		sent += part.length;
		// The consumer releases `part`; hand the pool the whole chunk when it is the same buffer's full view.
		yield part.length === chunk.length ? chunk : Buffer.from(part);
		if (part.length !== chunk.length) pool.release(chunk);
	}
}

/** Chunk size for a download: 64 KiB, or ~1/20 s of data when throttled (a multiple of 4, for the keystream). */
export function chunkSizeFor(bytesPerSecond?: number): number {
	if (!bytesPerSecond || bytesPerSecond <= 0) return CHUNK;
	return Math.max(512, Math.min(CHUNK, Math.floor(bytesPerSecond / 20))) & ~3;
}

/** sha256 of the artifact, computed from the generator in slices so the event loop keeps serving. */
export async function artifactSha256(seed: string, totalBytes: number): Promise<string> {
	const hash = createHash('sha256');
	// One reused buffer: hash.update consumes each chunk synchronously.
	const one = new ChunkPool(1024 * 1024);
	let sinceYield = 0;
	for (const chunk of artifactChunks(seed, totalBytes, one)) {
		hash.update(chunk);
		one.release(chunk);
		sinceYield += chunk.length;
		if (sinceYield >= 32 * 1024 * 1024) {
			sinceYield = 0;
			await new Promise((resolve) => setImmediate(resolve));
		}
	}
	return hash.digest('hex');
}

const CRC_TABLE = (() => {
	const table = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		table[n] = c >>> 0;
	}
	return table;
})();

function crc32(buf: Buffer): number {
	let c = 0xffffffff;
	for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
	const length = Buffer.alloc(4);
	length.writeUInt32BE(data.length, 0);
	const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(typed), 0);
	return Buffer.concat([length, typed, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A valid RGB PNG of the given size: a background colour and a square, both derived from the seed. */
export function deterministicPng(seed: string, width: number, height: number): Buffer {
	const h = createHash('sha256').update(seed).digest();
	const bg = [h[0], h[1], h[2]];
	const fg = [255 - h[0], 255 - h[1], 255 - h[2]];
	const side = Math.max(1, Math.floor(Math.min(width, height) / 3));
	const x0 = h[3] % Math.max(1, width - side);
	const y0 = h[4] % Math.max(1, height - side);
	const stride = width * 3 + 1;
	const raw = Buffer.alloc(stride * height);
	for (let y = 0; y < height; y++) {
		const row = y * stride;
		raw[row] = 0; // filter: none
		for (let x = 0; x < width; x++) {
			const inSquare = x >= x0 && x < x0 + side && y >= y0 && y < y0 + side;
			const colour = inSquare ? fg : bg;
			const at = row + 1 + x * 3;
			raw[at] = colour[0];
			raw[at + 1] = colour[1];
			raw[at + 2] = colour[2];
		}
	}
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(width, 0);
	ihdr.writeUInt32BE(height, 4);
	ihdr[8] = 8; // bit depth
	ihdr[9] = 2; // colour type: RGB
	return Buffer.concat([
		PNG_SIGNATURE,
		pngChunk('IHDR', ihdr),
		pngChunk('IDAT', deflateSync(raw)),
		pngChunk('IEND', Buffer.alloc(0)),
	]);
}

export function sha256Hex(data: Buffer | string): string {
	return createHash('sha256').update(data).digest('hex');
}
