import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { runChatOperation } from '../chatOperation';
import type { ChatOperation } from '../chatOperation';
import { ChatCompletionAssembler } from '../stream/chatCompletionAssembler';
import { ASSISTANT_ROLE, leadTextProperty, messageListProperty, USER_ROLE } from '../messageList';
import { chatCompletionReply } from '../output';

/** Operation "Message a Model": POST /v1/chat/completions, the system message first, then the listed messages. */

const SYSTEM_ROLE = { name: 'System', value: 'system', description: 'Instructions for the model' };

const systemMessageText = leadTextProperty('message', 'systemMessage', 'System Message', {
	placeholder: 'e.g. You are a helpful assistant',
	description: 'Optional instructions sent first, with the role "system"',
});

const messageList = messageListProperty({
	name: 'messages',
	displayName: 'Messages',
	placeholder: 'Add Message',
	roles: [USER_ROLE, ASSISTANT_ROLE, SYSTEM_ROLE],
	operation: 'message',
});

export const properties: INodeProperties[] = [systemMessageText, messageList];

function systemFirst(ctx: IExecuteFunctions, itemIndex: number, messages: IDataObject[]): IDataObject[] {
	const systemMessage = ctx.getNodeParameter('systemMessage', itemIndex, '') as string;
	return systemMessage.trim() === '' ? messages : [{ role: 'system', content: systemMessage }, ...messages];
}

const chatCompletions: ChatOperation = {
	endpoint: 'chatCompletions',
	path: '/v1/chat/completions',
	list: { name: 'messages', label: 'Messages' },
	body: (ctx, itemIndex, { model, messages, fields }) => ({
		model,
		messages: systemFirst(ctx, itemIndex, messages),
		...fields,
	}),
	// Usage comes on the last chunk only when asked for.
	streamFields: { stream: true, stream_options: { include_usage: true } },
	assembler: () => new ChatCompletionAssembler(),
	reply: chatCompletionReply,
};

export async function execute(ctx: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	return await runChatOperation(ctx, itemIndex, chatCompletions);
}
