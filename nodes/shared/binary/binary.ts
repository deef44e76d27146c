import { NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { forStore } from './largeChunks';
import { listen } from './streamEvents';
import { redact } from '../transport/errors';
import type { Readable } from '../transport/transport';

/**
 * Bytes from the service (a buffer, or a stream that is never held whole) → n8n binary data: the one path for every
 * node. The MIME type comes from the bytes themselves: a CDN's Content-Type or a URL's extension can be wrong, the
 * magic numbers cannot. A stream from n8n 1.x's socket is regrouped into large chunks for n8n's store (largeChunks.ts).
 */

interface MediaType {
	mimeType: string;
	extension: string;
}

/** Bytes needed to recognise every type below (an SVG's root element may follow an XML prolog and comments). */
export const SNIFF_BYTES = 512;

/** Bytes `start`…`end` as text, one character a byte (for magic numbers). */
export const ascii = (bytes: Uint8Array, start: number, end: number) =>
	String.fromCharCode(...Array.from(bytes.subarray(start, end)));

/** ISO base media files (mp4 and kin) name their brand right after `ftyp`; a few brands are still images. */
const FTYP_BRANDS: Record<string, MediaType> = {
	avif: { mimeType: 'image/avif', extension: 'avif' },
	avis: { mimeType: 'image/avif', extension: 'avif' },
	heic: { mimeType: 'image/heic', extension: 'heic' },
	heix: { mimeType: 'image/heic', extension: 'heic' },
	mif1: { mimeType: 'image/heif', extension: 'heif' },
	'qt  ': { mimeType: 'video/quicktime', extension: 'mov' },
};

/** An SVG is text: an optional XML prolog, comments and doctype, then the `<svg` root element. */
const SVG_START = /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i;

/** png, jpeg, webp, gif, avif/heic, bmp, tiff, svg and mp4 from their first bytes; undefined when none matches. */
export function detectMediaType(head: Uint8Array): MediaType | undefined {
	const b = head;
	if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, 4) === 'PNG' && b[4] === 0x0d && b[5] === 0x0a) {
		return { mimeType: 'image/png', extension: 'png' };
	}
	if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
		return { mimeType: 'image/jpeg', extension: 'jpg' };
	}
	if (b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) {
		return { mimeType: 'image/gif', extension: 'gif' };
	}
	if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') {
		return { mimeType: 'image/webp', extension: 'webp' };
	}
	if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp') {
		return FTYP_BRANDS[ascii(b, 8, 12)] ?? { mimeType: 'video/mp4', extension: 'mp4' };
	}
	if (b.length >= 14 && ascii(b, 0, 2) === 'BM' && b[6] === 0 && b[7] === 0 && b[8] === 0 && b[9] === 0) {
		return { mimeType: 'image/bmp', extension: 'bmp' };
	}
	if (b.length >= 8 && (ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*')) {
		return { mimeType: 'image/tiff', extension: 'tif' };
	}
	if (SVG_START.test(Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8'))) {
		return { mimeType: 'image/svg+xml', extension: 'svg' };
	}
	return undefined;
}

/** Text with at most a few control characters (a page, JSON, a message), as opposed to binary data. */
export function looksLikeText(head: Buffer): boolean {
	const text = head.toString('utf8');
	const controls = [...text].filter((c) => c < ' ' && c !== '\n' && c !== '\r' && c !== '\t').length;
	// One replacement character may be a multi-byte character cut at the end of `head`.
	const undecodable = text.split('\uFFFD').length - 1;
	return controls === 0 && undecodable <= 1;
}

/**
 * What some bytes are, in a few words a user can act on: "an empty body", "an HTML page: "<!doctype html>…"",
 * "JSON: "{…}"", "text: "…"", "a video/mp4 file", "2048 bytes of an unknown binary type (starting 00 01 …)".
 */
export function describeBytes(head: Buffer, totalKnown?: number): string {
	if (head.length === 0) return 'an empty body';
	const detected = detectMediaType(head);
	if (detected) return `a ${detected.mimeType} file`;
	if (looksLikeText(head)) {
		const text = head.toString('utf8').trim();
		const snippet = text.replace(/\s+/g, ' ').slice(0, 160);
		const quoted = `"${snippet}${text.length > snippet.length ? '…' : ''}"`;
		if (/^<(!doctype html|html|head|body|title|meta)/i.test(text)) return `an HTML page: ${quoted}`;
		if (/^[{[]/.test(text)) return `JSON: ${quoted}`;
		if (/^</.test(text)) return `XML or markup: ${quoted}`;
		return `text: ${quoted}`;
	}
	const hex = [...head.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
	const size = totalKnown ?? head.length;
	const more = totalKnown === undefined && head.length >= SNIFF_BYTES ? '+' : '';
	return `${size}${more} bytes of an unknown binary type (starting ${hex})`;
}

/**
 * A `data:` URL (RFC 2397) → its bytes and declared type; undefined when `url` is not one. Some services put the
 * image itself in `url` this way: it is decoded, never fetched.
 */
export function decodeDataUrl(url: string): { bytes: Buffer; mimeType?: string } | undefined {
	const match = /^data:([^,]*),/i.exec(url.slice(0, 256));
	if (!match) return undefined;
	const params = match[1].split(';').map((part) => part.trim());
	const base64 = params.some((part) => part.toLowerCase() === 'base64');
	const payload = url.slice(match[0].length);
	const bytes = base64
		? Buffer.from(decodeURIComponent(payload).replace(/\s+/g, ''), 'base64')
		: Buffer.from(decodeURIComponent(payload), 'utf8');
	return { bytes, mimeType: params[0] && params[0].includes('/') ? params[0].toLowerCase() : undefined };
}

const EXTENSIONS: Record<string, string> = {
	'image/png': 'png',
	'image/jpeg': 'jpg',
	'image/webp': 'webp',
	'image/gif': 'gif',
	'image/avif': 'avif',
	'image/bmp': 'bmp',
	'image/tiff': 'tif',
	'image/svg+xml': 'svg',
	'video/mp4': 'mp4',
};

/** A name with an extension: `extension` (the detected type's) is added when the name has none. */
export function fileNameWithExtension(fileName: string, extension: string | undefined): string {
	if (!extension || /\.[a-z0-9]{1,5}$/i.test(fileName)) return fileName;
	return `${fileName}.${extension}`;
}

function isBuffer(body: Buffer | Readable): body is Buffer {
	return Buffer.isBuffer(body);
}

/**
 * Reads the first bytes of a stream without consuming them: they are put back (unshift), so the stream can then be
 * handed on whole. `ended` means the stream was shorter than asked and is now fully in `head`.
 */
export async function peekStream(stream: Readable, wanted: number): Promise<{ head: Buffer; ended: boolean }> {
	const chunks: Buffer[] = [];
	let size = 0;
	let ended = false;
	while (size < wanted) {
		const chunk = stream.read() as Buffer | string | null;
		if (chunk !== null) {
			const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
			chunks.push(buffer);
			size += buffer.length;
			continue;
		}
		if (stream.readableEnded) {
			ended = true;
			break;
		}
		ended = await nextStreamSignal(stream);
		if (ended) break;
	}
	const head = Buffer.concat(chunks);
	if (!ended && head.length > 0) stream.unshift(head);
	return { head, ended };
}

/** Resolves true at the end of the stream, false when more can be read; rejects on an error or an early close. */
function nextStreamSignal(stream: Readable): Promise<boolean> {
	return new Promise<boolean>((resolve, reject) => {
		const stop = listen(stream, {
			readable: () => {
				stop();
				resolve(false);
			},
			end: () => {
				stop();
				resolve(true);
			},
			error: (error: Error) => {
				stop();
				reject(error);
			},
			close: () => {
				stop();
				if (stream.readableEnded) resolve(true);
				else reject(new Error('The connection closed before the file was complete'));
			},
		});
	});
}

interface ToBinaryOptions {
	/** The file name; the detected type's extension is added when it has none. */
	fileName: string;
	/** Used only when the bytes match no known type (e.g. the Content-Type of the answer). */
	mimeType?: string;
	/**
	 * The bytes must be an image. Anything else (an HTML login page or soft 404, JSON, text, a video, unknown bytes
	 * without an image Content-Type) fails with a NodeOperationError naming what came back: "<what> is not an image:
	 * <where> <description>", e.g. what = "Image 1", where = "its URL answered 200 with".
	 */
	expectImage?: { what: string; where: string; itemIndex: number };
	/** The key's variants (transport.ts credentialSecrets): what the bytes and the type say is masked in a message. */
	secrets?: readonly string[];
}

/** The bytes are an image: by their magic numbers, or (unknown to us) by an image Content-Type that is not text. */
function isImage(head: Buffer, detected: MediaType | undefined, hinted: string | undefined): boolean {
	if (detected) return detected.mimeType.startsWith('image/');
	return head.length > 0 && !looksLikeText(head) && hinted !== undefined && hinted.startsWith('image/');
}

/** The name and type to store bytes under, from their first bytes; throws when an image was expected and is not. */
export function classify(
	ctx: IExecuteFunctions,
	head: Buffer,
	totalKnown: number | undefined,
	options: ToBinaryOptions,
): { fileName: string; mimeType: string } {
	const detected = detectMediaType(head);
	const hinted = options.mimeType?.split(';')[0].trim().toLowerCase() || undefined;
	const expected = options.expectImage;
	if (expected && !isImage(head, detected, hinted)) {
		const found = describeBytes(head, totalKnown);
		const typed = hinted ? ` (Content-Type ${hinted.slice(0, 100)})` : '';
		throw new NodeOperationError(
			ctx.getNode(),
			// The bytes (a page or message that echoes the key) and the type are the service's words: masked.
			redact(`${expected.what} is not an image: ${expected.where} ${found}${typed}`, options.secrets ?? []),
			{
				description:
					'The service reported success, but what it gave for this image is not a PNG, JPEG, WebP, GIF, AVIF, HEIC, BMP, ' +
						'TIFF or SVG image, so it was not stored as one. A page or message from a CDN (a login page, a "not found" ' +
						'page with status 200) usually means the file URL is not public or no longer valid.',
				itemIndex: expected.itemIndex,
			},
		);
	}
	const mimeType = detected?.mimeType ?? hinted ?? 'application/octet-stream';
	const extension = detected?.extension ?? (hinted ? EXTENSIONS[hinted] : undefined);
	return { fileName: fileNameWithExtension(options.fileName, extension), mimeType };
}

/** Buffer or stream → IBinaryData, stored the way the instance stores binary data (memory or file system). */
export async function toBinary(
	ctx: IExecuteFunctions,
	body: Buffer | Readable,
	options: ToBinaryOptions,
): Promise<IBinaryData> {
	let data: Buffer | Readable = body;
	let head: Buffer;
	let ended = true;
	if (isBuffer(body)) {
		head = body.subarray(0, SNIFF_BYTES);
	} else {
		const peeked = await peekStream(body, SNIFF_BYTES);
		head = peeked.head;
		ended = peeked.ended;
		// A tiny body is already whole in `head`; a stream that has ended cannot be read again.
		if (peeked.ended) data = peeked.head;
	}
	const totalKnown = isBuffer(body) ? body.length : ended ? head.length : undefined;
	const { fileName, mimeType } = classify(ctx, head, totalKnown, options);
	return await ctx.helpers.prepareBinaryData(isBuffer(data) ? data : forStore(data), fileName, mimeType);
}
