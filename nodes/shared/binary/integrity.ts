/**
 * Whether a downloaded body is whole. The HTTP layer cannot always tell: a body without a length ends when the
 * connection closes, however early; a compressed body cut short inflates without complaint. So the bytes are counted
 * against what the answer announced (Content-Length, Content-Range), and an mp4's own structure is walked: its
 * top-level boxes announce their sizes, so a file that stops inside one is known to be cut.
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

/** A box type is four printable characters (ISO/IEC 14496-12; `©` starts some). */
const plausibleType = (bytes: Buffer) => [...bytes].every((b) => (b >= 0x20 && b <= 0x7e) || b === 0xa9);

/**
 * Walks the top-level boxes of an ISO media file (mp4, mov) as its bytes go by, across resumed bodies. Without a
 * verdict when the bytes stop looking like boxes (an unusual file is not called broken), or when a box runs to the end.
 */
export class BoxWalker {
	private offset = 0;
	/** Where the next box header starts. */
	private next = 0;
	private header: number[] = [];
	private unknown = false;
	private toEnd = false;

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
		else if (size === 0) this.toEnd = true;
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

	/** The bytes so far are whole boxes of a structure it recognised, the last one ending exactly here. */
	complete(): boolean {
		return !this.unknown && !this.toEnd && this.header.length === 0 && this.offset > 0 && this.offset === this.next;
	}

	/** Why the file is incomplete, or undefined when it is whole (or its structure is not one we can judge). */
	verdict(): string | undefined {
		if (this.unknown || this.toEnd) return undefined;
		if (this.offset < this.next) {
			return `the mp4 stops at byte ${this.offset}, inside a box that runs to byte ${this.next}`;
		}
		// A header cut before its size and type are known proves nothing about the box it would start.
		if (this.header.length >= 8) return `the mp4 stops at byte ${this.offset}, inside a box header`;
		return undefined;
	}
}

/** An mp4 (or another ISO media file) by its first box: `ftyp`. */
export const isIsoMedia = (head: Buffer) => head.length >= 8 && head.toString('latin1', 4, 8) === 'ftyp';
