import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { classify, decodeDataUrl, toBinary } from '../shared/binary/binary';
import { downloadChecked, downloadHeaders } from '../shared/binary/download';
import { headerMimeType } from '../shared/transport/redaction';
import { credentialSecrets, downloadUrl } from '../shared/transport/transport';

/**
 * The `data` entries of an image answer → output items: each image becomes n8n binary data (a `b64_json` decoded, a
 * `url` downloaded at once as a stream), either one item per image or all images on one item.
 */

export type OutputMode = 'itemPerImage' | 'oneItem';

/** Where an error item keeps the URLs of images that were generated (and paid) but could not be downloaded. */
export const IMAGE_URLS = 'imageUrls';

interface ImageEntry extends IDataObject {
	b64_json?: string;
	url?: string;
	revised_prompt?: string;
}

export function imageEntries(ctx: IExecuteFunctions, response: IDataObject, itemIndex: number): ImageEntry[] {
	const data = response.data;
	if (!Array.isArray(data) || data.length === 0) {
		throw new NodeOperationError(ctx.getNode(), 'The service answered without any image', {
			description: 'The answer of POST /v1/images/generations had no "data" entries.',
			itemIndex,
		});
	}
	return data as ImageEntry[];
}

/** Binary property names: `data` per item, or `data_0`, `data_1`, … when all images share one item. */
function binaryKey(base: string, index: number, mode: OutputMode): string {
	return mode === 'oneItem' ? `${base}_${index}` : base;
}

/**
 * How long an image download may stay silent once it began (the node's Timeout) and take in all (Max Download Time),
 * and where to raise them.
 */
interface DownloadTimeout {
	timeoutMs: number;
	timeoutAdvice: string;
	total: { ms: number; option: string; advice: string };
}

/** A URL download streamed into binary data, checked, and fetched again (resumed when it can be) when it breaks. */
async function downloadImage(
	ctx: IExecuteFunctions,
	url: string,
	fileName: string,
	what: string,
	itemIndex: number,
	timeout?: DownloadTimeout,
): Promise<IBinaryData> {
	return await downloadChecked(ctx, {
		name: fileName,
		itemIndex,
		...timeout,
		// The node's Timeout bounds the wait for the answer to begin too (not only silence after it began).
		open: async (range) =>
			await downloadUrl(ctx, url, itemIndex, {
				headers: downloadHeaders(range),
				timeoutMs: timeout?.timeoutMs,
				timeoutAdvice: timeout?.timeoutAdvice,
			}),
		accept: async (head, response, totalKnown) => {
			const secrets = await credentialSecrets(ctx);
			return classify(ctx, head, totalKnown, {
				fileName,
				// A Content-Type that is no MIME type, or holds the key, is not one to store the image under.
				mimeType: headerMimeType(response.headers['content-type'], secrets),
				expectImage: { what, where: `its URL answered ${response.statusCode} with`, itemIndex },
				secrets,
			});
		},
	});
}

async function imageBinary(
	ctx: IExecuteFunctions,
	entry: ImageEntry,
	index: number,
	itemIndex: number,
	timeout?: DownloadTimeout,
): Promise<IBinaryData> {
	const fileName = `image-${index + 1}`;
	const what = `Image ${index + 1}`;
	if (typeof entry.b64_json === 'string' && entry.b64_json !== '') {
		const bytes = Buffer.from(entry.b64_json, 'base64');
		if (bytes.length === 0) {
			throw new NodeOperationError(ctx.getNode(), `Image ${index + 1} is not valid base64`, { itemIndex });
		}
		return await toBinary(ctx, bytes, {
			fileName,
			expectImage: { what, where: 'its b64_json decodes to', itemIndex },
			secrets: await credentialSecrets(ctx),
		});
	}
	if (typeof entry.url === 'string' && entry.url !== '') {
		// The image itself, inlined as a data: URL: decoded, never fetched.
		const inline = decodeDataUrl(entry.url);
		if (inline) {
			return await toBinary(ctx, inline.bytes, {
				fileName,
				mimeType: inline.mimeType,
				expectImage: { what, where: 'its data: URL holds', itemIndex },
				secrets: await credentialSecrets(ctx),
			});
		}
		return await downloadImage(ctx, entry.url, fileName, what, itemIndex, timeout);
	}
	throw new NodeOperationError(ctx.getNode(), `Image ${index + 1} has neither "b64_json" nor "url"`, { itemIndex });
}

const isDataUrl = (url: unknown): boolean => typeof url === 'string' && /^data:/i.test(url);

/** What an item says about its image besides the bytes: never the base64 itself (nor a data: URL holding it). */
function imageJson(entry: ImageEntry, index: number, common: IDataObject): IDataObject {
	const json: IDataObject = { ...common, index };
	for (const [key, value] of Object.entries(entry)) {
		if (key !== 'b64_json' && !(key === 'url' && isDataUrl(value))) json[key] = value;
	}
	return json;
}

/** A download failed after a paid generation: keep the URLs so the images need not be generated again. */
function withImageUrls(ctx: IExecuteFunctions, thrown: unknown, entries: ImageEntry[], itemIndex: number): unknown {
	// A stream that fails mid-body throws a plain Error: say what it was doing.
	const error =
		thrown instanceof NodeApiError || thrown instanceof NodeOperationError
			? thrown
			: new NodeOperationError(
					ctx.getNode(),
					`Downloading an image failed: ${(thrown as Error)?.message ?? String(thrown)}`,
					{
						itemIndex,
					},
				);
	const urls = entries
		.map((entry) => entry.url)
		.filter((url): url is string => typeof url === 'string' && url !== '' && !isDataUrl(url));
	const context = (error as { context?: IDataObject }).context;
	if (urls.length > 0 && context) {
		context[IMAGE_URLS] = urls;
		const withDescription = error as { description?: string };
		withDescription.description =
			`${withDescription.description ?? ''} The images were generated (and may be charged); their URLs are kept ` +
			`in the error item ("${IMAGE_URLS}") when the node continues on fail, so they can be fetched without ` +
			'generating again.';
		withDescription.description = withDescription.description.trim();
	}
	return error;
}

export async function binaryItems(
	ctx: IExecuteFunctions,
	entries: ImageEntry[],
	opts: {
		mode: OutputMode;
		binaryPropertyName: string;
		common: IDataObject;
		itemIndex: number;
		timeout?: DownloadTimeout;
	},
): Promise<INodeExecutionData[]> {
	const pairedItem = { item: opts.itemIndex };
	const binaries: IBinaryData[] = [];
	try {
		for (let index = 0; index < entries.length; index++) {
			binaries.push(await imageBinary(ctx, entries[index], index, opts.itemIndex, opts.timeout));
		}
	} catch (error) {
		throw withImageUrls(ctx, error, entries, opts.itemIndex);
	}
	if (opts.mode === 'itemPerImage') {
		return entries.map((entry, index) => ({
			json: imageJson(entry, index, opts.common),
			binary: { [opts.binaryPropertyName]: binaries[index] },
			pairedItem,
		}));
	}
	const binary: IBinaryKeyData = {};
	binaries.forEach((data, index) => (binary[binaryKey(opts.binaryPropertyName, index, 'oneItem')] = data));
	return [
		{
			json: { ...opts.common, images: entries.map((entry, index) => imageJson(entry, index, {})) },
			binary,
			pairedItem,
		},
	];
}

/** "Return As: URL or Base64": the entries as the service sent them. */
export function returnedItems(
	entries: ImageEntry[],
	opts: { mode: OutputMode; common: IDataObject; itemIndex: number },
): INodeExecutionData[] {
	const pairedItem = { item: opts.itemIndex };
	if (opts.mode === 'itemPerImage') {
		return entries.map((entry, index) => ({ json: { ...opts.common, index, ...entry }, pairedItem }));
	}
	return [{ json: { ...opts.common, images: entries.map((entry, index) => ({ index, ...entry })) }, pairedItem }];
}
