import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import type { Readable } from './transport';

/**
 * Bytes from the service (a buffer, or a stream that is never held whole) → n8n binary data. The MIME type comes from
 * the bytes themselves: a CDN's Content-Type or a URL's extension can be wrong, the magic numbers cannot.
 */

export interface MediaType {
	mimeType: string;
	extension: string;
}

/** Bytes needed to recognise every type below. */
export const SNIFF_BYTES = 16;

const ascii = (bytes: Uint8Array, start: number, end: number) =>
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

/** png, jpeg, webp, gif and mp4 from their first bytes; undefined when none matches. */
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
	return undefined;
}

const EXTENSIONS: Record<string, string> = {
	'image/png': 'png',
	'image/jpeg': 'jpg',
	'image/webp': 'webp',
	'image/gif': 'gif',
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
		const cleanup = () => {
			stream.off('readable', onReadable);
			stream.off('end', onEnd);
			stream.off('error', onError);
			stream.off('close', onClose);
		};
		const onReadable = () => {
			cleanup();
			resolve(false);
		};
		const onEnd = () => {
			cleanup();
			resolve(true);
		};
		const onError = (error: Error) => {
			cleanup();
			reject(error);
		};
		const onClose = () => {
			cleanup();
			if (stream.readableEnded) resolve(true);
			else reject(new Error('The connection closed before the file was complete'));
		};
		stream.on('readable', onReadable);
		stream.on('end', onEnd);
		stream.on('error', onError);
		stream.on('close', onClose);
	});
}

export interface ToBinaryOptions {
	/** The file name; the detected type's extension is added when it has none. */
	fileName: string;
	/** Used only when the bytes match no known type (e.g. the Content-Type of the answer). */
	mimeType?: string;
}

/** Buffer or stream → IBinaryData, stored the way the instance stores binary data (memory or file system). */
export async function toBinary(
	ctx: IExecuteFunctions,
	body: Buffer | Readable,
	options: ToBinaryOptions,
): Promise<IBinaryData> {
	let data: Buffer | Readable = body;
	let head: Buffer;
	if (isBuffer(body)) {
		head = body.subarray(0, SNIFF_BYTES);
	} else {
		const peeked = await peekStream(body, SNIFF_BYTES);
		head = peeked.head;
		// A tiny body is already whole in `head`; a stream that has ended cannot be read again.
		if (peeked.ended) data = peeked.head;
	}
	const detected = detectMediaType(head);
	const hinted = options.mimeType?.split(';')[0].trim().toLowerCase() || undefined;
	const mimeType = detected?.mimeType ?? hinted ?? 'application/octet-stream';
	const extension = detected?.extension ?? (hinted ? EXTENSIONS[hinted] : undefined);
	const fileName = fileNameWithExtension(options.fileName, extension);
	return await ctx.helpers.prepareBinaryData(data, fileName, mimeType);
}
