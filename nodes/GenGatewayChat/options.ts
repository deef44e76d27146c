import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { extraBodyField, parseExtraBody } from '../shared/descriptions/requestFields';
import { timeoutOption } from '../shared/descriptions/timeoutOption';
import type { Endpoint } from './messageList';

/** The "Options" both operations share, and how each becomes request-body fields for one endpoint. */

type StreamingMode = 'auto' | 'always' | 'never';

interface ChatOptions {
	extraBody?: unknown;
	jsonOutput?: boolean;
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
		{
			displayName: 'Temperature',
			name: 'temperature',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: 2, numberPrecision: 2 },
			default: 1,
			description: 'Randomness of the answer: lower is more focused, higher is more varied',
		},
		timeoutOption,
		{
			displayName: 'Top P',
			name: 'topP',
			type: 'number',
			typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 },
			default: 1,
			description: 'Nucleus sampling: only tokens within this probability mass are considered',
		},
	],
};

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

/** Sampling and format fields, named the way each endpoint names them. */
export function optionFields(
	ctx: IExecuteFunctions,
	options: ChatOptions,
	endpoint: Endpoint,
	itemIndex: number,
): IDataObject {
	const fields: IDataObject = {};
	if (options.temperature !== undefined) fields.temperature = options.temperature;
	if (options.topP !== undefined) fields.top_p = options.topP;
	if (options.maxTokens !== undefined) {
		fields[endpoint === 'chatCompletions' ? 'max_tokens' : 'max_output_tokens'] = options.maxTokens;
	}
	if (endpoint === 'chatCompletions') {
		const stop = parseStop(ctx, options.stop, itemIndex);
		if (stop !== undefined) fields.stop = stop;
		if (options.seed !== undefined) fields.seed = options.seed;
	}
	if (options.jsonOutput) {
		if (endpoint === 'chatCompletions') fields.response_format = { type: 'json_object' };
		else fields.text = { format: { type: 'json_object' } };
	}
	return fields;
}

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
