import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { routedChatOperation, samplingFields } from '../chatOperation';
import type { ChatOperation } from '../chatOperation';
import { ASSISTANT_ROLE, leadTextProperty, messageListProperty, USER_ROLE } from '../messageList';
import { responseReply } from '../output';
import { ResponseAssembler } from '../stream/responseAssembler';

/** Operation "Create a Response": POST /v1/responses (instructions + input messages). */

export const properties: INodeProperties[] = [
	leadTextProperty('response', 'instructions', 'Instructions', {
		placeholder: 'e.g. Answer in one sentence',
		description: 'Optional instructions for the model (sent as "instructions")',
	}),
	messageListProperty({
		name: 'input',
		displayName: 'Input',
		placeholder: 'Add Input Message',
		description: 'The conversation so far; the model answers the last message',
		roles: [USER_ROLE, ASSISTANT_ROLE, { name: 'Developer', value: 'developer', description: 'Instructions from the developer' }],
		operation: 'response',
	}),
];

/** Instructions go after the options' fields, where they always went (saved workflows send the same body). */
function withInstructions(ctx: IExecuteFunctions, itemIndex: number, body: IDataObject): IDataObject {
	const instructions = ctx.getNodeParameter('instructions', itemIndex, '') as string;
	return instructions.trim() === '' ? body : { ...body, instructions };
}

const responses: ChatOperation = {
	endpoint: 'responses',
	path: '/v1/responses',
	list: { name: 'input', label: 'Input' },
	fields: (_ctx, _itemIndex, options) => ({
		...samplingFields(options, 'max_output_tokens'),
		...(options.jsonOutput ? { text: { format: { type: 'json_object' } } } : {}),
	}),
	body: (ctx, itemIndex, { model, messages, fields }) =>
		withInstructions(ctx, itemIndex, { model, input: messages, ...fields }),
	streamFields: { stream: true },
	assembler: () => new ResponseAssembler(),
	reply: responseReply,
};

export const operation = routedChatOperation(properties, responses);
