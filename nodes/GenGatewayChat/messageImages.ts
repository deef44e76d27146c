import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { binaryImageUrl } from './binaryImage';
import { MAX_IMAGE_MB } from '../shared/binary/imageBytes';
import { checkImageUrl, IMAGE_URLS_ALLOWED, imageUrlEntries } from './imageUrls';

/**
 * Images in a user message: by URL or from binary fields of the input item. The fields sit in each message entry,
 * shown for the User role only; their defaults (no image) leave a message exactly as before.
 */

type ImageSource = 'none' | 'url' | 'binary';
type ImageDetail = 'auto' | 'low' | 'high';

export interface ImageFields {
	imageSource?: ImageSource;
	/** Text (one URL per line); an expression may give a list. */
	imageUrls?: string | unknown[];
	binaryPropertyName?: string;
	imageDetail?: ImageDetail;
}

/** One image as it goes into a message: a URL (http(s) or `data:`) and the detail asked for. */
export interface ImageRef {
	url: string;
	detail: ImageDetail;
}

const forUser = (imageSource?: ImageSource[]) => ({
	show: { role: ['user'], ...(imageSource ? { imageSource } : {}) },
});

export const imageFields: INodeProperties[] = [
	{
		displayName: 'Images',
		name: 'imageSource',
		type: 'options',
		default: 'none',
		description: 'Images the model should look at along with this message',
		options: [
			{ name: 'None', value: 'none' },
			{
				name: 'From Binary Field(s) of the Input',
				value: 'binary',
				description: 'Binary data another node put out, such as the images of the Image node',
			},
			{
				name: 'From URL(s)',
				value: 'url',
				description: 'Public HTTP(S) URLs or data: URLs',
			},
		],
		displayOptions: forUser(),
	},
	{
		displayName: 'Image URL(s)',
		name: 'imageUrls',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://example.com/photo.jpg',
		description:
			'One URL per line (or a list from an expression): HTTP(S) URLs the service can fetch, or data: URLs of images ' +
			`up to ${MAX_IMAGE_MB} MB. A comma separates URLs only before the next http(s):// or data:, so commas ` +
			'inside a URL stay.',
		displayOptions: forUser(['url']),
	},
	{
		displayName: 'Input Binary Field(s)',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		placeholder: 'e.g. data',
		hint: 'The name of the input field holding the image; several separated by commas',
		description: `Sent as a data: URL, at most ${MAX_IMAGE_MB} MB each`,
		displayOptions: forUser(['binary']),
	},
	{
		displayName: 'Image Detail',
		name: 'imageDetail',
		type: 'options',
		default: 'auto',
		description:
			'How closely the model looks at the images: Auto lets the model decide by their size, Low is faster and ' +
			'uses fewer tokens, High sees more detail for more tokens',
		options: [
			{ name: 'Auto', value: 'auto' },
			{ name: 'High', value: 'high' },
			{ name: 'Low', value: 'low' },
		],
		displayOptions: forUser(['url', 'binary']),
	},
];

const listOf = (text: string | undefined) =>
	(text ?? '')
		.split(',')
		.map((name) => name.trim())
		.filter(Boolean);

/** The images of one message entry (none unless the entry is the user's and names a source). */
export async function imagesOf(
	ctx: IExecuteFunctions,
	entry: ImageFields & { role?: string },
	itemIndex: number,
	where: string,
): Promise<ImageRef[]> {
	if ((entry.role ?? 'user') !== 'user') return [];
	const detail = entry.imageDetail ?? 'auto';
	const fromUrls = entry.imageSource === 'url';
	if (!fromUrls && entry.imageSource !== 'binary') return [];
	const sources = fromUrls ? imageUrlEntries(entry.imageUrls) : listOf(entry.binaryPropertyName ?? 'data');
	if (sources.length === 0) {
		const field = fromUrls ? 'Image URL(s)' : 'Input Binary Field(s)';
		throw new NodeOperationError(ctx.getNode(), `${where}: "${field}" is empty`, {
			description: `Fill in "${field}", or set "Images" to None. Nothing was sent.`,
			itemIndex,
		});
	}
	if (fromUrls) {
		// Every entry is checked before any is used: one bad URL fails the item with nothing sent.
		return sources.map((source, index) => {
			const checked = checkImageUrl(source);
			if ('url' in checked) return { url: checked.url, detail };
			const entryName = sources.length > 1 ? ` entry ${index + 1}` : '';
			throw new NodeOperationError(ctx.getNode(), `${where}: "Image URL(s)"${entryName}: ${checked.refused}`, {
				description: IMAGE_URLS_ALLOWED,
				itemIndex,
			});
		});
	}
	const images: ImageRef[] = [];
	for (const source of sources as string[]) {
		images.push({ url: await binaryImageUrl(ctx, source, itemIndex, where), detail });
	}
	return images;
}
