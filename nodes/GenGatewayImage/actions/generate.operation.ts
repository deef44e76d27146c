import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { rejectErrorAnswer } from '../../shared/transport/answerError';
import { extraBodyField, mergeExtraBody, parseExtraBody, readModel } from '../../shared/descriptions/requestFields';
import { chatRunPolicy } from '../../shared/run/n8nChatStream';
import type { Operation } from '../../shared/run/router';
import { submitOnce } from '../../shared/run/submissionGuard';
import {
	MAX_DOWNLOAD_TIME,
	TIMEOUT_ADVICE,
	timeoutMsOf,
	timeoutOption,
	totalBoundAdvice,
	totalBoundMsOf,
	totalBoundOption,
} from '../../shared/descriptions/timeoutOption';
import { gatewayJson } from '../../shared/transport/transport';
import { binaryItems, IMAGE_URLS, imageEntries, returnedItems } from '../imageOutput';
import type { OutputMode } from '../imageOutput';

/** Operation "Generate": POST /v1/images/generations, then the images as binary data (or as returned). */

const PATH = '/v1/images/generations';

const show = { show: { operation: ['generate'] } };

export const properties: INodeProperties[] = [
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		typeOptions: { rows: 3 },
		default: '',
		required: true,
		placeholder: 'e.g. A lighthouse on a cliff at dawn, watercolour',
		description: 'What the image should show',
		displayOptions: show,
	},
	{
		displayName: 'Number of Images',
		name: 'n',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 10 },
		default: 1,
		description: 'How many images to generate (each may be charged)',
		displayOptions: show,
	},
	{
		displayName: 'Size',
		name: 'size',
		type: 'options',
		default: '1024x1024',
		description: 'Width x height in pixels; which sizes a model supports depends on the model',
		options: [
			// In n8n's lint order: sorted by name as text.
			{ name: '1024x1024', value: '1024x1024' },
			{ name: '1024x1536 (Portrait)', value: '1024x1536' },
			{ name: '1024x1792 (Portrait)', value: '1024x1792' },
			{ name: '1536x1024 (Landscape)', value: '1536x1024' },
			{ name: '1792x1024 (Landscape)', value: '1792x1024' },
			{ name: '256x256', value: '256x256' },
			{ name: '512x512', value: '512x512' },
			{ name: 'Model Default (Not Sent)', value: '' },
		],
		displayOptions: show,
	},
	{
		displayName: 'Return As',
		name: 'returnAs',
		type: 'options',
		default: 'binary',
		options: [
			{
				name: 'Binary File',
				value: 'binary',
				description: 'Each image as n8n binary data (base64 decoded, URLs downloaded at once)',
			},
			{
				name: 'URL or Base64 as Returned',
				value: 'returned',
				description: "Each image's URL or b64_json field exactly as the service sent it (URLs may expire)",
			},
		],
		displayOptions: show,
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: show,
		options: [
			{
				displayName: 'Binary Property',
				name: 'binaryPropertyName',
				type: 'string',
				default: 'data',
				description:
					'Name of the binary property for the image. With all images on one item, an index is added: data_0, data_1 and ' +
						'so on.',
				displayOptions: { show: { '/returnAs': ['binary'] } },
			},
			{
				...extraBodyField,
			},
			{
				...totalBoundOption(
					MAX_DOWNLOAD_TIME,
					'Passing it hangs up and fails the item, with the image URLs kept; nothing is stored.',
				),
				displayOptions: { show: { '/returnAs': ['binary'] } },
			},
			{
				displayName: 'Output',
				name: 'outputMode',
				type: 'options',
				default: 'itemPerImage',
				options: [
					{ name: 'One Item per Image', value: 'itemPerImage' },
					{ name: 'All Images on One Item', value: 'oneItem' },
				],
				description: 'How several images of one request are returned',
			},
			{
				displayName: 'Response Format',
				name: 'responseFormat',
				type: 'options',
				default: '',
				options: [
					{ name: 'Service Default (Not Sent)', value: '' },
					{ name: 'Base64 (B64_json)', value: 'b64_json' },
					{ name: 'URL', value: 'url' },
				],
				description: 'How the service should hand over the images (response_format)',
			},
			timeoutOption,
		],
	},
];

interface GenerateOptions {
	binaryPropertyName?: string;
	extraBody?: unknown;
	outputMode?: OutputMode;
	responseFormat?: '' | 'b64_json' | 'url';
	timeout?: number;
	maxDownloadTime?: number;
}

export function generationBody(
	fields: { model: string; prompt: string; n: number; size: string; responseFormat?: string },
	extra: IDataObject,
): IDataObject {
	const body: IDataObject = { model: fields.model, prompt: fields.prompt, n: fields.n };
	if (fields.size) body.size = fields.size;
	if (fields.responseFormat) body.response_format = fields.responseFormat;
	return mergeExtraBody(body, extra);
}

/** Items one by one; a failed item keeps the image URLs it got. */
export const operation: Operation = {
	properties,
	policy: (ctx) => chatRunPolicy(ctx, [IMAGE_URLS]),
	run: async (ctx, itemIndex) => await generate(ctx, itemIndex),
};

async function generate(ctx: IExecuteFunctions, itemIndex: number): Promise<INodeExecutionData[]> {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as GenerateOptions;
	const body = generationBody(
		{
			model: readModel(ctx, itemIndex),
			prompt: ctx.getNodeParameter('prompt', itemIndex, '') as string,
			n: ctx.getNodeParameter('n', itemIndex, 1) as number,
			size: ctx.getNodeParameter('size', itemIndex, '') as string,
			responseFormat: options.responseFormat,
		},
		parseExtraBody(ctx, options.extraBody, itemIndex),
	);
	// Paid: sent once per run of the node; a retry reuses the answer and only downloads again (shared/submissionGuard).
	const { value: response } = await submitOnce(ctx, {
		itemIndex,
		what: `POST ${PATH}`,
		send: async () => {
			const answer = await gatewayJson<IDataObject>(ctx, {
				method: 'POST',
				path: PATH,
				body,
				kind: 'submit',
				itemIndex,
				timeoutMs: timeoutMsOf(options.timeout),
				timeoutAdvice: TIMEOUT_ADVICE,
			});
			// A 200 whose body is {"error": ...} is the service's error, not an answer without images.
			await rejectErrorAnswer(ctx, answer, { method: 'POST', path: PATH, itemIndex });
			return answer;
		},
	});
	const entries = imageEntries(ctx, response, itemIndex);

	const common: IDataObject = { model: body.model as string, prompt: body.prompt as string };
	if (response.created !== undefined) common.created = response.created;
	if (response.usage !== undefined) common.usage = response.usage;
	const mode = options.outputMode ?? 'itemPerImage';
	const returnAs = ctx.getNodeParameter('returnAs', itemIndex, 'binary') as string;
	if (returnAs !== 'binary') return returnedItems(entries, { mode, common, itemIndex });
	return await binaryItems(ctx, entries, {
		mode,
		binaryPropertyName: options.binaryPropertyName || 'data',
		common,
		itemIndex,
		timeout: {
			timeoutMs: timeoutMsOf(options.timeout),
			timeoutAdvice: TIMEOUT_ADVICE,
			total: {
				ms: totalBoundMsOf(MAX_DOWNLOAD_TIME, options.maxDownloadTime),
				option: 'Max Download Time',
				advice: totalBoundAdvice(MAX_DOWNLOAD_TIME),
			},
		},
	});
}
