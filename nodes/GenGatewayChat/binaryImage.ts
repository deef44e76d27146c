import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

/** An image of the input item's binary data as a `data:<mime>;base64,...` URL, checked before anything is sent. */

/** The most one image may weigh (the OpenAI format's per-image limit); a larger one fails the item unsent. */
export const MAX_IMAGE_MB = 20;

const MB = 1024 * 1024;
const MAX_IMAGE_BYTES = MAX_IMAGE_MB * MB;

/** Image types recognised by their first bytes, for binary data labelled with a generic MIME type. */
const SIGNATURES: Array<{ mime: string; matches: (bytes: Buffer) => boolean }> = [
	{
		mime: 'image/png',
		matches: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
	},
	{
		mime: 'image/jpeg',
		matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
	},
	{
		mime: 'image/gif',
		matches: (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
	},
	{
		mime: 'image/webp',
		matches: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
	},
];

function imageMime(labelled: string | undefined, bytes: Buffer): string | undefined {
	if (labelled?.toLowerCase().startsWith('image/')) return labelled;
	return SIGNATURES.find((signature) => signature.matches(bytes))?.mime;
}

const megabytes = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

/**
 * Reads binary field `field` of item `itemIndex` through n8n's helpers. `where` names the message the image belongs
 * to, for the errors (e.g. `Messages › Message 1`).
 */
export async function binaryImageUrl(
	ctx: IExecuteFunctions,
	field: string,
	itemIndex: number,
	where: string,
): Promise<string> {
	const binary = ctx.helpers.assertBinaryData(itemIndex, field);
	const bytes = await ctx.helpers.getBinaryDataBuffer(itemIndex, field);
	const named = `Input binary field "${field}" of item ${itemIndex} (${where})`;
	if (bytes.length > MAX_IMAGE_BYTES) {
		const size = `${megabytes(bytes.length)} (${bytes.length} bytes)`;
		throw new NodeOperationError(ctx.getNode(), `${named} is too big: ${size}, the limit is ${MAX_IMAGE_MB} MB`, {
			description:
				`An image sent in a message may be at most ${MAX_IMAGE_MB} MB (${MAX_IMAGE_BYTES} bytes). Nothing was sent. ` +
				'Make the image smaller (e.g. with the Edit Image node) or pass a URL to it instead.',
			itemIndex,
		});
	}
	const mime = imageMime(binary.mimeType, bytes);
	if (mime === undefined) {
		throw new NodeOperationError(ctx.getNode(), `${named} is not an image (${binary.mimeType || 'no MIME type'})`, {
			description: 'A message takes images (PNG, JPEG, GIF, WebP). Nothing was sent. Check the binary field name.',
			itemIndex,
		});
	}
	return `data:${mime};base64,${bytes.toString('base64')}`;
}
