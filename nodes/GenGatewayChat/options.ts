import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { samplingOption, textTimeoutOption } from '../shared/descriptions/chatOptions';
import { extraBodyField, parseExtraBody } from '../shared/descriptions/requestFields';
import { MAX_ANSWER_TIME, totalBoundOption } from '../shared/descriptions/timeoutOption';
import { DEFAULT_MAX_ANSWER_MB } from './stream/answerBound';

/**
 * The "Options" both operations share, as the node shows them and as an item's values read. Which request-body
 * fields they become is each operation's own (`fields` in actions/<op>.operation.ts).
 */

type StreamingMode = 'auto' | 'always' | 'never';

export interface ChatOptions {
	extraBody?: unknown;
	jsonOutput?: boolean;
	maxAnswerSize?: number;
	maxAnswerTime?: number;
	maxTokens?: number;
	seed?: number;
	stop?: string;
	streaming?: StreamingMode;
	temperature?: number;
	timeout?: number;
	topP?: number;
}

export const optionsProperty: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			...extraBodyField,
		},
		{
			displayName: 'JSON Output',
			name: 'jsonOutput',
			type: 'boolean',
			default: false,
			description:
				'Whether to ask the model for a JSON object (response_format / text.format "json_object") and return it parsed. ' +
					'A reply that is not JSON fails the item. Tip: also ask for JSON in the prompt.',
		},
		{
			displayName: 'Max Answer Size (MB)',
			name: 'maxAnswerSize',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_MAX_ANSWER_MB,
			description:
				'The most a streamed answer may hold once assembled (its text and tool calls, in MB). Passing it stops the ' +
					'read and fails the item: a service that never ends its stream cannot fill the memory.',
		},
		totalBoundOption(
			MAX_ANSWER_TIME,
			'Passing it hangs up and fails the item; the call counts as paid and is not resent. A non-streamed answer ' +
				'must arrive whole within the Timeout.',
		),
		{
			displayName: 'Maximum Number of Tokens',
			name: 'maxTokens',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 1024,
			description:
				'The most tokens the answer may have (max_tokens for chat completions, max_output_tokens for responses)',
		},
		{
			displayName: 'Seed',
			name: 'seed',
			type: 'number',
			default: 0,
			description: 'Ask for repeatable sampling: the same seed and parameters should give the same answer',
			displayOptions: { show: { '/operation': ['message'] } },
		},
		{
			displayName: 'Stop Sequences',
			name: 'stop',
			type: 'string',
			default: '',
			placeholder: 'e.g. END or ["\\n\\n", "END"]',
			description: 'Where the model stops writing: one sequence, or several as a JSON array of strings',
			displayOptions: { show: { '/operation': ['message'] } },
		},
		{
			displayName: 'Streaming',
			name: 'streaming',
			type: 'options',
			default: 'auto',
			description:
				'Whether to receive the answer as a stream of server-sent events. A streamed answer is still returned whole; ' +
					'when n8n streams the execution to a chat, its pieces are also forwarded there as they arrive.',
			options: [
				{
					name: 'When Streaming to a Chat',
					value: 'auto',
					description: 'Stream only when n8n streams this execution to a chat (Chat Trigger, Webhook)',
				},
				{ name: 'Always', value: 'always', description: 'Always ask for a stream' },
				{ name: 'Never', value: 'never', description: 'Always ask for the whole answer at once' },
			],
		},
		samplingOption('temperature', 'chat'),
		textTimeoutOption('chat'),
		samplingOption('topP', 'chat'),
	],
};

/** The Streaming option: "When Streaming to a Chat" (auto, the default) follows n8n's chat. */
export function wantsStream(mode: StreamingMode | undefined, toN8nChat: boolean): boolean {
	if (mode === 'always') return true;
	if (mode === 'never') return false;
	return toN8nChat;
}

export function readOptions(ctx: IExecuteFunctions, itemIndex: number): { options: ChatOptions; extra: IDataObject } {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as ChatOptions;
	return { options, extra: parseExtraBody(ctx, options.extraBody, itemIndex) };
}
