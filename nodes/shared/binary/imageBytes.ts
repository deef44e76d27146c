import { describeBytes, detectMediaType } from '../shared/binary/binary';

/**
 * Whether some bytes are an image a message may carry, from the bytes themselves: a label (a binary's MIME type, a
 * `data:` URL's type) can be wrong, the magic numbers cannot. Shared by images from binary fields and `data:` URLs.
 */

/** The most one image may weigh (the OpenAI format's per-image limit); a larger one fails the item unsent. */
export const MAX_IMAGE_MB = 20;
export const MAX_IMAGE_BYTES = MAX_IMAGE_MB * 1024 * 1024;

/** The bytes needed to recognise every image type (an SVG's root element may follow an XML prolog). */
export const SNIFF_BYTES = 512;

export const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** Text (a page, JSON, a message) rather than binary data: no control characters, at most one undecodable. */
function looksLikeText(head: Buffer): boolean {
	const text = head.toString('utf8');
	const controls = [...text].filter((c) => c < ' ' && c !== '\n' && c !== '\r' && c !== '\t').length;
	// One replacement character may be a multi-byte character cut at the end of `head`.
	return controls === 0 && text.split('\uFFFD').length - 1 <= 1;
}

/**
 * The image type of bytes starting with `head`, or what they are instead (e.g. `an HTML page: "<!doctype html>…"`).
 * An image is recognised by its magic number (PNG, JPEG, GIF, WebP, AVIF/HEIC, BMP, TIFF, SVG); binary bytes of no
 * known type pass only when labelled `image/…`; text, a video or nothing never pass, whatever the label.
 */
export function imageTypeOf(
	head: Buffer,
	labelled: string | undefined,
	totalBytes?: number,
): { mimeType: string } | { notAnImage: string } {
	const detected = detectMediaType(head);
	if (detected?.mimeType.startsWith('image/')) return { mimeType: detected.mimeType };
	const label = labelled?.split(';')[0].trim().toLowerCase();
	if (!detected && head.length > 0 && !looksLikeText(head) && label?.startsWith('image/')) return { mimeType: label };
	return { notAnImage: describeBytes(head, totalBytes) };
}
