import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { mergeExtraBody, readModel } from '../../shared/descriptions/requestFields';
import { timeoutMsOf } from '../../shared/descriptions/timeoutOption';
import { CompletionAssembler } from '../completionStream';
import { ASSISTANT_ROLE, messageListProperty, messagesOf, USER_ROLE } from '../messageList';
import type { MessageEntry } from '../messageList';
import { optionFields, readOptions, wantsStream } from '../options';
import { sendPaidChatRequest } from '../paidRequest';
import { completionReply, replyJson } from '../output';

/** Operation "Message a Model": POST /v1/chat/completions. */

const PATH = '/v1/chat/completions';

const show = { show: { operation: ['message'] } };

export const properties: INodeProperties[] = [
	{
		displayName: 'System Message',
		name: 'systemMessage',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		placeholder: 'e.g. You are a helpful assistant',
		description: 'Optional instructions sent first, with the role "system"',
		displayOptions: show,
	},
	messageListProperty({
		name: 'messages',
		displayName: 'Messages',
		placeholder: 'Add Message',
		roles: [USER_ROLE, ASSISTANT_ROLE, { name: 'System', value: 'system', description: 'Instructions for the model' }],
		operation: 'message',
	}),
];

/** The system message (when given) first, then the listed messages in order. */
export function chatMessages(systemMessage: string, entries: MessageEntry[]): IDataObject[] {
	const messages: IDataObject[] = [];
	if (systemMessage.trim() !== '') messages.push({ role: 'system', content: systemMessage });
	return [...messages, ...messagesOf(entries)];
}

export async function execute(ctx: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const model = readModel(ctx, itemIndex);
	const systemMessage = ctx.getNodeParameter('systemMessage', itemIndex, '') as string;
	const entries = ctx.getNodeParameter('messages.values', itemIndex, []) as MessageEntry[];
	const simplify = ctx.getNodeParameter('simplify', itemIndex, true) as boolean;
	const { options, extra } = readOptions(ctx, itemIndex);
	const timeoutMs = timeoutMsOf(options.timeout);

	let body: IDataObject = {
		model,
		messages: chatMessages(systemMessage, entries),
		...optionFields(ctx, options, 'chat', itemIndex),
	};
	if (wantsStream(ctx, options.streaming)) {
		// Usage comes on the last chunk only when asked for.
		body.stream = true;
		body.stream_options = { include_usage: true };
	}
	body = mergeExtraBody(body, extra);

	const assembler = new CompletionAssembler();
	const response = await sendPaidChatRequest(ctx, { path: PATH, body, itemIndex, timeoutMs, assembler });

	return replyJson(ctx, response, completionReply(response), {
		simplify,
		jsonOutput: options.jsonOutput === true,
		itemIndex,
	});
}
