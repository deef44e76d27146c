/**
 * Deterministic media: mp4-looking artifacts generated as streams (never held whole in memory) and tiny PNGs.
 * Same seed and size → same bytes, so a sha256 can be computed without storing anything.
 */
import { createCipheriv, createHash } from 'crypto';
import { setTimeout as wait } from 'timers/promises';
import { deflateSync } from 'zlib';

const CHUNK = 64 * 1024;
const ZEROS = Buffer.alloc(CHUNK);

/** A real `ftyp` box (isom brand) followed by an `mdat` box header covering the rest of the file. */
export function mp4Header(totalBytes: number): Buffer {
	const ftyp = Buffer.alloc(32);
	ftyp.writeUInt32BE(32, 0);
	ftyp.write('ftypisom', 4, 'latin1');
	ftyp.writeUInt32BE(0x200, 12);
	ftyp.write('isomiso2avc1mp41', 16, 'latin1');
	const mdat = Buffer.alloc(8);
	mdat.writeUInt32BE(Math.min(Math.max(totalBytes - 32, 8), 0xffffffff), 0);
	mdat.write('mdat', 4, 'latin1');
	return Buffer.concat([ftyp, mdat]);
}

/** Yields the artifact's bytes in chunks: the header, then an AES-CTR keystream (fast, deterministic). */
export function* artifactChunks(seed: string, totalBytes: number, chunkSize = CHUNK): Generator<Buffer> {
	const key = createHash('sha256').update(`key:${seed}`).digest();
	const iv = createHash('sha256').update(`iv:${seed}`).digest().subarray(0, 16);
	const cipher = createCipheriv('aes-256-ctr', key, iv);
	const header = mp4Header(totalBytes);
	let pos = 0;
	while (pos < totalBytes) {
		const n = Math.min(chunkSize, totalBytes - pos);
		const chunk = cipher.update(ZEROS.subarray(0, n));
		if (pos < header.length) header.copy(chunk, 0, pos, Math.min(header.length, pos + n));
		pos += n;
		yield chunk;
	}
}

/** The artifact as an async stream, optionally throttled to `bytesPerSecond`. */
export async function* artifactStream(
	seed: string,
	totalBytes: number,
	bytesPerSecond?: number,
): AsyncGenerator<Buffer> {
	if (!bytesPerSecond || bytesPerSecond <= 0) {
		yield* artifactChunks(seed, totalBytes);
		return;
	}
	// Small chunks (~20 per second) so a throttled download looks steady.
	const chunkSize = Math.max(512, Math.min(CHUNK, Math.floor(bytesPerSecond / 20)));
	const started = Date.now();
	let sent = 0;
	for (const chunk of artifactChunks(seed, totalBytes, chunkSize)) {
		const due = started + (sent * 1000) / bytesPerSecond;
		if (due > Date.now()) await wait(due - Date.now());
		sent += chunk.length;
		yield chunk;
	}
}

/** sha256 of the artifact, computed from the generator in slices so the event loop keeps serving. */
export async function artifactSha256(seed: string, totalBytes: number): Promise<string> {
	const hash = createHash('sha256');
	let sinceYield = 0;
	for (const chunk of artifactChunks(seed, totalBytes, 1024 * 1024)) {
		hash.update(chunk);
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
