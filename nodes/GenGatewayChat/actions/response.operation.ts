import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { mergeExtraBody, readModel } from '../../shared/descriptions/requestFields';
import { timeoutMsOf } from '../../shared/descriptions/timeoutOption';
import { ASSISTANT_ROLE, messageListProperty, messagesOf, USER_ROLE } from '../messageList';
import type { MessageEntry } from '../messageList';
import { optionFields, readOptions, wantsStream } from '../options';
import { sendPaidChatRequest } from '../paidRequest';
import { replyJson, responseReply } from '../output';
import { ResponseAssembler } from '../responseStream';

/** Operation "Create a Response": POST /v1/responses (instructions + input messages). */

const PATH = '/v1/responses';

const show = { show: { operation: ['response'] } };

export const properties: INodeProperties[] = [
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
	messageListProperty({
		name: 'input',
		displayName: 'Input',
		placeholder: 'Add Input Message',
		description: 'The conversation so far; the model answers the last message',
		roles: [
			USER_ROLE,
			ASSISTANT_ROLE,
			{ name: 'Developer', value: 'developer', description: 'Instructions from the developer' },
		],
		operation: 'response',
	}),
];

export async function execute(ctx: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const model = readModel(ctx, itemIndex);
	const instructions = ctx.getNodeParameter('instructions', itemIndex, '') as string;
	const entries = ctx.getNodeParameter('input.values', itemIndex, []) as MessageEntry[];
	const simplify = ctx.getNodeParameter('simplify', itemIndex, true) as boolean;
	const { options, extra } = readOptions(ctx, itemIndex);
	const timeoutMs = timeoutMsOf(options.timeout);

	let body: IDataObject = {
		model,
		input: messagesOf(entries),
		...optionFields(ctx, options, 'responses', itemIndex),
	};
	if (instructions.trim() !== '') body.instructions = instructions;
	if (wantsStream(ctx, options.streaming)) body.stream = true;
	body = mergeExtraBody(body, extra);

	const assembler = new ResponseAssembler();
	const response = await sendPaidChatRequest(ctx, { path: PATH, body, itemIndex, timeoutMs, assembler });

	return replyJson(ctx, response, responseReply(response), {
		simplify,
		jsonOutput: options.jsonOutput === true,
		itemIndex,
	});
}
