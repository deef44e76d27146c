import { describeBytes, detectMediaType, looksLikeText } from './binary';

/**
 * Whether some bytes are an image a message may carry, from the bytes themselves: a label (a binary's MIME type, a
 * `data:` URL's type) can be wrong, the magic numbers cannot. Shared by Chat's images (binary fields, `data:` URLs)
 * and Video's frames.
 */

/** The most one image may weigh (the OpenAI format's per-image limit); a larger one fails the item unsent. */
export const MAX_IMAGE_MB = 20;
export const MAX_IMAGE_BYTES = MAX_IMAGE_MB * 1024 * 1024;

export { SNIFF_BYTES } from './binary';

export const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

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
