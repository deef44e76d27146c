import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { mergeExtraBody, readModel } from '../shared/requestFields';
import { gatewayJson } from '../shared/transport';
import { optionFields, readOptions, wantsStream } from './options';
import { replyJson, responseReply } from './output';
import { ResponseAssembler } from './responseStream';
import { streamedRequest } from './streaming';

/** Operation "Create a Response": POST /v1/responses (instructions + input messages). */

const PATH = '/v1/responses';

const show = { show: { operation: ['response'] } };

export const createResponseProperties: INodeProperties[] = [
	{
		displayName: 'Instructions',
		name: 'instructions',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		placeholder: 'e.g. Answer in one sentence',
		description: 'Optional instructions for the model (sent as "instructions")',
		displayOptions: show,
	},
	{
		displayName: 'Input',
		name: 'input',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add Input Message',
		default: { values: [{ role: 'user', content: '' }] },
		description: 'The conversation so far; the model answers the last message',
		displayOptions: show,
		options: [
			{
				displayName: 'Message',
				name: 'values',
				values: [
					{
						displayName: 'Role',
						name: 'role',
						type: 'options',
						default: 'user',
						options: [
							{ name: 'User', value: 'user', description: 'What the user says' },
							{ name: 'Assistant', value: 'assistant', description: 'An earlier answer of the model' },
							{ name: 'Developer', value: 'developer', description: 'Instructions from the developer' },
						],
					},
					{
						displayName: 'Content',
						name: 'content',
						type: 'string',
						typeOptions: { rows: 2 },
						default: '',
						placeholder: 'e.g. Hello, how can you help me?',
					},
				],
			},
		],
	},
];

interface InputEntry {
	role?: string;
	content?: string;
}

export function responseInput(entries: InputEntry[]): IDataObject[] {
	return entries.map((entry) => ({ role: entry.role ?? 'user', content: entry.content ?? '' }));
}

export async function createResponse(ctx: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const model = readModel(ctx, itemIndex);
	const instructions = ctx.getNodeParameter('instructions', itemIndex, '') as string;
	const entries = ctx.getNodeParameter('input.values', itemIndex, []) as InputEntry[];
	const simplify = ctx.getNodeParameter('simplify', itemIndex, true) as boolean;
	const { options, extra } = readOptions(ctx, itemIndex);

	let body: IDataObject = {
		model,
		input: responseInput(entries),
		...optionFields(ctx, options, 'responses', itemIndex),
	};
	if (instructions.trim() !== '') body.instructions = instructions;
	if (wantsStream(ctx, options.streaming)) body.stream = true;
	body = mergeExtraBody(body, extra);

	const response =
		body.stream === true
			? await streamedRequest(ctx, { path: PATH, body, itemIndex, assembler: new ResponseAssembler() })
			: await gatewayJson<IDataObject>(ctx, { method: 'POST', path: PATH, body, kind: 'submit', itemIndex });

	return replyJson(ctx, response, responseReply(response), {
		simplify,
		jsonOutput: options.jsonOutput === true,
		itemIndex,
	});
}
