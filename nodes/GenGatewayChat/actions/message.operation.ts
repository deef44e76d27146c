import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { routedChatOperation, samplingFields } from '../chatOperation';
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

/** One stop sequence, or a JSON array of them. */
function parseStop(
	ctx: IExecuteFunctions,
	raw: string | undefined,
	itemIndex: number,
): string | string[] | undefined {
	if (raw === undefined || raw === '') return undefined;
	const text = raw.trim();
	if (!text.startsWith('[')) return raw;
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		parsed = undefined;
	}
	if (!Array.isArray(parsed) || parsed.some((entry) => typeof entry !== 'string')) {
		throw new NodeOperationError(ctx.getNode(), 'Stop Sequences is not a JSON array of strings', {
			description: 'Enter one sequence as plain text, or several as a JSON array such as ["\\n\\n", "END"].',
			itemIndex,
		});
	}
	return parsed as string[];
}

const chatCompletions: ChatOperation = {
	endpoint: 'chatCompletions',
	path: '/v1/chat/completions',
	list: { name: 'messages', label: 'Messages' },
	fields: (ctx, itemIndex, options) => {
		const fields = samplingFields(options, 'max_tokens');
		const stop = parseStop(ctx, options.stop, itemIndex);
		if (stop !== undefined) fields.stop = stop;
		if (options.seed !== undefined) fields.seed = options.seed;
		if (options.jsonOutput) fields.response_format = { type: 'json_object' };
		return fields;
	},
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

export const operation = routedChatOperation(properties, chatCompletions);
