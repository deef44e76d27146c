import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import type { Readable } from '../transport/transport';

/**
 * Binary data of an input item, measured and read within a limit without holding more than the limit: shared by
 * Chat's images (sent as `data:` URLs) and Video's frames and references (sent as signed URLs).
 */

/**
 * The size n8n recorded for the binary data, without reading it: a stored file's metadata (`fileSize`, written by
 * n8n's store), else the `bytes` n8n put on the item; for data held in the item (memory mode), its base64 length.
 */
export async function recordedSize(ctx: IExecuteFunctions, binary: IBinaryData): Promise<number | undefined> {
	if (binary.id) {
		try {
			const { fileSize } = await ctx.helpers.getBinaryMetadata(binary.id);
			if (Number.isFinite(fileSize)) return fileSize;
		} catch {
			// No metadata (an older store): the bounded read below still holds the limit.
		}
		return typeof binary.bytes === 'number' ? binary.bytes : undefined;
	}
	const base64 = typeof binary.data === 'string' ? binary.data.replace(/=+$/, '') : '';
	return Math.floor((base64.length * 3) / 4);
}

/** All of `stream`, or undefined as soon as it is longer than `limit` (then the rest is never read). */
export async function readAtMost(stream: Readable, limit: number): Promise<Buffer | undefined> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of stream) {
		const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
		size += buffer.length;
		// Leaving the loop destroys the stream: nothing more is read.
		if (size > limit) return undefined;
		chunks.push(buffer);
	}
	return Buffer.concat(chunks);
}

/** The length of `stream`, or undefined as soon as it is longer than `limit`; nothing is kept. */
export async function countAtMost(stream: Readable, limit: number): Promise<number | undefined> {
	let size = 0;
	for await (const chunk of stream) {
		size += Buffer.isBuffer(chunk) ? chunk.length : Buffer.byteLength(chunk as string);
		if (size > limit) return undefined;
	}
	return size;
}
