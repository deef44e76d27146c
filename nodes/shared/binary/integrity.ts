import { detectMediaType } from './binary';

/**
 * Whether a downloaded body is whole. The HTTP layer cannot always tell: a body without a length ends when the
 * connection closes, however early; a compressed body cut short inflates without complaint. So the bytes are counted
 * against what the answer announced (Content-Length, Content-Range), and the file's own structure is checked
 * (structureOf): an mp4's top-level boxes announce their sizes and must include `moov` and `mdat`; an image ends where
 * its format says (PNG: the IEND chunk; JPEG: the EOI marker; GIF: the trailer; WebP: its RIFF size).
 */

type Headers = Record<string, string | string[] | undefined>;

const single = (value: string | string[] | undefined): string | undefined =>
	Array.isArray(value) ? value[0] : value;

/** `Content-Range: bytes <first>-<last>/<total|*>` of a 206. */
export function contentRange(headers: Headers): { first: number; last: number; total?: number } | undefined {
	const match = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(single(headers['content-range']) ?? '');
	if (!match) return undefined;
	const [first, last] = [Number(match[1]), Number(match[2])];
	if (last < first) return undefined;
	return { first, last, total: match[3] === '*' ? undefined : Number(match[3]) };
}

/** The byte count a 200 announced, when it did. */
export function contentLength(headers: Headers): number | undefined {
	const text = single(headers['content-length'])?.trim();
	return text && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** Whether the answer can be continued from a byte (`Accept-Ranges: bytes`); its strong ETag names the file. */
export function resumeInfo(headers: Headers): { ranges: boolean; etag?: string } {
	const ranges = /(^|,)\s*bytes\s*(,|$)/i.test(single(headers['accept-ranges']) ?? '');
	const etag = single(headers.etag)?.trim();
	// If-Range needs a strong validator (RFC 9110 §13.1.5); without one a resumed body could be another file's bytes.
	return { ranges, etag: etag && !etag.startsWith('W/') ? etag : undefined };
}

/** The validators that name one version of a file: its strong ETag and its Last-Modified date. */
export function validatorsOf(headers: Headers): { etag?: string; lastModified?: string } {
	const lastModified = single(headers['last-modified'])?.trim();
	return { etag: resumeInfo(headers).etag, lastModified: lastModified || undefined };
}

/** Whether the answer says where its body ends: a length, or chunked framing (a close alone says nothing). */
export function isFramed(headers: Headers): boolean {
	return contentLength(headers) !== undefined || /(^|,)\s*chunked\s*$/i.test(single(headers['transfer-encoding']) ?? '');
}

/** Whether the body was sent encoded (gzip…): its decoded bytes then differ from its announced length. */
export function isEncoded(headers: Headers): boolean {
	const encoding = single(headers['content-encoding'])?.trim().toLowerCase();
	return encoding !== undefined && encoding !== '' && encoding !== 'identity';
}

/** What a download checks against a file's own structure, as its bytes go by (across resumed bodies). */
export interface FileStructure {
	feed(chunk: Buffer): void;
	/** The bytes so far end exactly where the structure says the file ends. */
	complete(): boolean;
	/** Why the file is not whole, or undefined when it is (or when its structure cannot be judged). */
	verdict(): string | undefined;
}

/** A box type is four printable characters (ISO/IEC 14496-12; `©` starts some). */
const plausibleType = (bytes: Buffer) => [...bytes].every((b) => (b >= 0x20 && b <= 0x7e) || b === 0xa9);

/**
 * Walks the top-level boxes of an ISO media file (mp4, mov) as its bytes go by, across resumed bodies. The file is
 * whole when its last box ends where the bytes end and the boxes `required` were among them (an mp4 without `moov` or
 * `mdat` cannot be played: cut after its `ftyp`, or before a trailing `moov`). Bytes that stop looking like boxes, a
 * box that runs to the end, or a few bytes after the last box are judged by the required boxes alone.
 */
export class BoxWalker implements FileStructure {
	private offset = 0;
	private readonly seen = new Set<string>();
	/** Where the next box header starts. */
	private next = 0;
	private header: number[] = [];
	private unknown = false;
	private toEnd = false;

	constructor(
		private readonly required: readonly string[] = ['moov', 'mdat'],
		private readonly what = 'the mp4',
	) {}

	feed(chunk: Buffer): void {
		let i = 0;
		while (i < chunk.length && !this.unknown && !this.toEnd) {
			const position = this.offset + i;
			if (position < this.next) {
				i += Math.min(chunk.length - i, this.next - position);
				continue;
			}
			const wanted = this.header.length < 8 ? 8 : 16;
			const take = Math.min(wanted - this.header.length, chunk.length - i);
			for (let k = 0; k < take; k++) this.header.push(chunk[i + k]);
			i += take;
			if (this.header.length === 8) this.readHeader();
			else if (this.header.length === 16) this.readLargeSize();
		}
		this.offset += chunk.length;
	}

	private readHeader(): void {
		const bytes = Buffer.from(this.header);
		const size = bytes.readUInt32BE(0);
		if (!plausibleType(bytes.subarray(4, 8)) || (size > 1 && size < 8)) this.unknown = true;
		else this.seen.add(bytes.toString('latin1', 4, 8));
		if (this.unknown) return;
		if (size === 0) this.toEnd = true;
		else if (size > 1) this.endBox(size);
		// size 1: a 64-bit size follows (readLargeSize).
	}

	private readLargeSize(): void {
		const size = Number(Buffer.from(this.header).readBigUInt64BE(8));
		if (size < 16) this.unknown = true;
		else this.endBox(size);
	}

	private endBox(size: number): void {
		this.next += size;
		this.header = [];
	}

	private lacking(): string[] {
		return this.required.filter((type) => !this.seen.has(type));
	}

	/** The bytes so far are whole boxes of a structure it recognised, the last one ending exactly here. */
	complete(): boolean {
		const ended = !this.unknown && !this.toEnd && this.header.length === 0 && this.offset === this.next;
		return ended && this.offset > 0 && this.lacking().length === 0;
	}

	/** Why the file is incomplete, or undefined when it is whole (or its structure is not one we can judge). */
	verdict(): string | undefined {
		if (!this.unknown && !this.toEnd) {
			if (this.offset < this.next) {
				return `${this.what} stops at byte ${this.offset}, inside a box that runs to byte ${this.next}`;
			}
			if (this.header.length >= 8) return `${this.what} stops at byte ${this.offset}, inside a box header`;
		}
		const lacking = this.lacking();
		if (lacking.length === 0) return undefined;
		return `${this.what} stops at byte ${this.offset} and has no ${lacking.join(' or ')} box`;
	}
}

/** The last bytes seen, at most `keep` of them. */
class Tail {
	bytes = Buffer.alloc(0);

	constructor(private readonly keep: number) {}

	feed(chunk: Buffer): void {
		const joined = chunk.length >= this.keep ? chunk : Buffer.concat([this.bytes, chunk]);
		this.bytes = Buffer.from(joined.subarray(Math.max(0, joined.length - this.keep)));
	}
}

/** An image that is whole when its last bytes are `ending` (PNG's IEND chunk, JPEG's EOI marker, GIF's trailer). */
class EndsWith implements FileStructure {
	private readonly tail: Tail;

	constructor(
		private readonly ending: Buffer,
		private readonly missing: string,
	) {
		this.tail = new Tail(ending.length);
	}

	feed(chunk: Buffer): void {
		this.tail.feed(chunk);
	}

	complete(): boolean {
		return this.tail.bytes.equals(this.ending);
	}

	verdict(): string | undefined {
		return this.complete() ? undefined : this.missing;
	}
}

/** A WebP is a RIFF file: 8 bytes of header, then as many bytes as its size field says (and a pad byte if odd). */
class RiffSize implements FileStructure {
	private count = 0;
	private readonly expected: number;

	constructor(private readonly riffSize: number) {
		this.expected = riffSize + 8;
	}

	feed(chunk: Buffer): void {
		this.count += chunk.length;
	}

	complete(): boolean {
		return this.count === this.expected || (this.riffSize % 2 === 1 && this.count === this.expected + 1);
	}

	verdict(): string | undefined {
		if (this.count < this.expected) {
			return `the WebP stops at byte ${this.count} of the ${this.expected} its RIFF header announces`;
		}
		if (!this.complete()) return `the WebP runs past the ${this.expected} bytes its RIFF header announces`;
		return undefined;
	}
}

/**
 * A JPEG by its segments: after SOI every marker segment is skipped by its length, the entropy-coded data after a
 * scan is read to its next marker, and the file is whole when its EOI comes at the top level with nothing after it.
 * (A thumbnail's own FF D9 inside an EXIF segment is skipped with its segment: a file cut right after it is not whole.)
 */
class JpegWalker implements FileStructure {
	private offset = 0;
	/** What the next byte is: SOI's two bytes, a marker's FF (or fill), its code, a length's two bytes, skipped bytes, scan data. */
	private state: 'soi0' | 'soi1' | 'ff' | 'code' | 'len0' | 'len1' | 'skip' | 'scan' | 'scanFf' | 'end' | 'bad' = 'soi0';
	private length = 0;
	private skip = 0;
	private inScan = false;
	private after = 0;

	feed(chunk: Buffer): void {
		for (const byte of chunk) this.step(byte);
		this.offset += chunk.length;
	}

	private step(byte: number): void {
		switch (this.state) {
			case 'soi0':
				this.state = byte === 0xff ? 'soi1' : 'bad';
				return;
			case 'soi1':
				this.state = byte === 0xd8 ? 'ff' : 'bad';
				return;
			case 'ff':
				this.state = byte === 0xff ? 'code' : 'bad';
				return;
			case 'code':
				return this.marker(byte);
			case 'len0':
				this.length = byte << 8;
				this.state = 'len1';
				return;
			case 'len1':
				this.length |= byte;
				this.skip = this.length - 2;
				this.state = this.skip > 0 ? 'skip' : this.inScan ? 'scan' : 'ff';
				if (this.length < 2) this.state = 'bad';
				return;
			case 'skip':
				if (--this.skip === 0) this.state = this.inScan ? 'scan' : 'ff';
				return;
			case 'scan':
				if (byte === 0xff) this.state = 'scanFf';
				return;
			case 'scanFf':
				// Stuffed zero, a restart marker, or fill: still scan data; anything else is the next marker.
				if (byte === 0x00 || (byte >= 0xd0 && byte <= 0xd7)) this.state = 'scan';
				else if (byte !== 0xff) this.marker(byte);
				return;
			case 'end':
				this.after++;
				return;
			default:
				return;
		}
	}

	private marker(code: number): void {
		this.inScan = false;
		if (code === 0xff) this.state = 'code';
		else if (code === 0xd9) this.state = 'end';
		else if (code === 0x01 || (code >= 0xd0 && code <= 0xd7)) this.state = 'ff';
		else {
			this.inScan = code === 0xda;
			this.state = 'len0';
		}
	}

	complete(): boolean {
		return this.state === 'end' && this.after === 0;
	}

	verdict(): string | undefined {
		if (this.state === 'bad') return undefined;
		if (this.complete()) return undefined;
		if (this.state === 'end') return `the JPEG runs ${this.after} bytes past its EOI marker`;
		return `the JPEG stops at byte ${this.offset}, before its EOI marker (FF D9)`;
	}
}

/**
 * A GIF by its blocks: header, screen descriptor and colour table, then extensions and images (each a chain of
 * sub-blocks ending in a zero), whole at its trailer (3B) with nothing after it. (A 3B among the image data is data.)
 */
class GifWalker implements FileStructure {
	private offset = 0;
	private skip = 13;
	/** After the fixed bytes to skip: what comes next. */
	private next: 'screen' | 'block' | 'label' | 'image' | 'codeSize' | 'subBlock' | 'end' | 'bad' = 'screen';
	private state: 'skip' | 'read' = 'skip';
	private packed = 0;
	private after = 0;

	feed(chunk: Buffer): void {
		for (const byte of chunk) this.step(byte);
		this.offset += chunk.length;
	}

	private table = (packed: number) => ((packed & 0x80) !== 0 ? 3 * 2 ** ((packed & 7) + 1) : 0);

	private step(byte: number): void {
		if (this.next === 'end') {
			this.after++;
			return;
		}
		if (this.next === 'bad') return;
		if (this.state === 'skip') {
			// The screen descriptor's packed byte (offset 10) says whether a global colour table follows.
			if (this.next === 'screen' && 13 - this.skip === 10) this.packed = byte;
			if (this.next === 'image' && this.skip === 1) this.packed = byte;
			if (--this.skip > 0) return;
			this.afterSkip();
			return;
		}
		this.read(byte);
	}

	private afterSkip(): void {
		if (this.next === 'screen' || this.next === 'image') {
			const table = this.table(this.packed);
			const image = this.next === 'image';
			this.next = image ? 'codeSize' : 'block';
			if (table > 0) {
				// The colour table is skipped; then the block (or the image's LZW code size) is read.
				this.skip = table;
				this.state = 'skip';
				return;
			}
		}
		this.state = 'read';
	}

	private read(byte: number): void {
		switch (this.next) {
			case 'block':
				if (byte === 0x3b) this.next = 'end';
				else if (byte === 0x21) this.next = 'label';
				else if (byte === 0x2c) {
					this.next = 'image';
					this.skip = 9;
					this.state = 'skip';
				} else this.next = 'bad';
				return;
			case 'label':
				this.next = 'subBlock';
				return;
			case 'codeSize':
				this.next = 'subBlock';
				return;
			case 'subBlock':
				if (byte === 0) this.next = 'block';
				else {
					this.skip = byte;
					this.state = 'skip';
				}
				return;
			default:
				return;
		}
	}

	complete(): boolean {
		return this.next === 'end' && this.after === 0;
	}

	verdict(): string | undefined {
		if (this.next === 'bad' || this.complete()) return undefined;
		if (this.next === 'end') return `the GIF runs ${this.after} bytes past its trailer`;
		return `the GIF stops at byte ${this.offset}, before its trailer (3B)`;
	}
}

const PNG_END = Buffer.from('0000000049454e44ae426082', 'hex');

/**
 * The structure check of a file starting with `head` (at least its first 12 bytes): an ISO media file by its boxes
 * (a video or audio file needs `moov` and `mdat`, an AVIF/HEIC image its `meta`), a PNG, JPEG, GIF or WebP by its end.
 * Undefined for other files: only what they announced (the byte counts) is checked.
 */
export function structureOf(head: Buffer): FileStructure | undefined {
	const type = detectMediaType(head)?.mimeType;
	if (isIsoMedia(head)) {
		return type?.startsWith('image/') ? new BoxWalker(['meta', 'mdat'], 'the image') : new BoxWalker();
	}
	switch (type) {
		case 'image/png':
			return new EndsWith(PNG_END, 'the PNG has no IEND chunk at its end');
		case 'image/jpeg':
			return new JpegWalker();
		case 'image/gif':
			return new GifWalker();
		case 'image/webp':
			return new RiffSize(head.readUInt32LE(4));
		default:
			return undefined;
	}
}

/** An mp4 (or another ISO media file) by its first box: `ftyp`. */
export const isIsoMedia = (head: Buffer) => head.length >= 8 && head.toString('latin1', 4, 8) === 'ftyp';
