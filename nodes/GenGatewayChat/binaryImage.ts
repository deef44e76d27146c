import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { peekStream } from '../shared/binary/binary';
import { readAtMost, recordedSize } from '../shared/binary/storedBinary';
import type { Readable } from '../shared/transport/transport';
import { imageTypeOf, MAX_IMAGE_BYTES, MAX_IMAGE_MB, megabytes, SNIFF_BYTES } from '../shared/binary/imageBytes';

/**
 * An image of the input item's binary data as a `data:<mime>;base64,...` URL, checked before anything is sent: its
 * size from n8n's binary metadata before a byte is read (a stored file is then read at most to the limit), its type
 * from its first bytes (an HTML page labelled `image/png` is no image).
 */

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
	const named = `Input binary field "${field}" of item ${itemIndex} (${where})`;
	const tooBig = (size: string) =>
		new NodeOperationError(ctx.getNode(), `${named} is too big: ${size}, the limit is ${MAX_IMAGE_MB} MB`, {
			description:
				`An image sent in a message may be at most ${MAX_IMAGE_MB} MB (${MAX_IMAGE_BYTES} bytes). Nothing was sent. ` +
				'Make the image smaller (e.g. with the Edit Image node) or pass a URL to it instead.',
			itemIndex,
		});
	const notAnImage = (what: string) => {
		const label = binary.mimeType || 'no MIME type';
		return new NodeOperationError(ctx.getNode(), `${named} is not an image (${label}; its bytes are ${what})`, {
			description:
				'A message takes images (PNG, JPEG, GIF, WebP). Nothing was sent. Check the binary field name, and that ' +
				'the node before really got an image (a page or a message saved as a file is not one).',
			itemIndex,
		});
	};

	const recorded = await recordedSize(ctx, binary);
	if (recorded !== undefined && recorded > MAX_IMAGE_BYTES) throw tooBig(`${megabytes(recorded)} (${recorded} bytes)`);

	let bytes: Buffer | undefined;
	if (binary.id) {
		// A stored file: its first bytes are looked at before the rest is read, and no more than the limit is read.
		const stream = (await ctx.helpers.getBinaryStream(binary.id)) as Readable;
		const { head, ended } = await peekStream(stream, SNIFF_BYTES);
		const early = imageTypeOf(head, binary.mimeType, recorded);
		if ('notAnImage' in early) {
			stream.destroy();
			throw notAnImage(early.notAnImage);
		}
		// A file shorter than the sniff is whole in `head` (the stream has ended and cannot be read again).
		bytes = ended ? head : await readAtMost(stream, MAX_IMAGE_BYTES);
		if (bytes === undefined) throw tooBig(`more than ${MAX_IMAGE_MB} MB`);
	} else {
		bytes = await ctx.helpers.getBinaryDataBuffer(itemIndex, binary);
		if (bytes.length > MAX_IMAGE_BYTES) throw tooBig(`${megabytes(bytes.length)} (${bytes.length} bytes)`);
	}
	const type = imageTypeOf(bytes.subarray(0, SNIFF_BYTES), binary.mimeType, bytes.length);
	if ('notAnImage' in type) throw notAnImage(type.notAnImage);
	return `data:${type.mimeType};base64,${bytes.toString('base64')}`;
}
