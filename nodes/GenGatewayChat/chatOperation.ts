import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { mergeExtraBody, readModel } from '../shared/descriptions/requestFields';
import { MAX_ANSWER_TIME, timeoutMsOf, totalBoundMsOf } from '../shared/descriptions/timeoutOption';
import { chatRunPolicy, streamsToN8nChat } from '../shared/run/n8nChatStream';
import type { Operation } from '../shared/run/router';
import { messagesOf } from './messageList';
import type { Endpoint, MessageEntry } from './messageList';
import { readOptions, wantsStream } from './options';
import type { ChatOptions } from './options';
import { replyJson } from './output';
import type { Reply } from './output';
import { sendPaidChatRequest } from './paidRequest';
import { maxAnswerBytes } from './stream/answerBound';
import type { StreamAssembler } from './stream/assembler';
import { PARTIAL_CONTENT } from '../shared/transport/streamErrors';
import { redactDeep } from '../shared/transport/redaction';
import { credentialSecrets } from '../shared/transport/transport';

/** What differs between the two chat operations; `runChatOperation` does the rest the same way for both. */
export interface ChatOperation {
	endpoint: Endpoint;
	path: string;
	/** The message list parameter (`messages` or `input`) and its label in errors. */
	list: { name: string; label: string };
	/** The Options as this endpoint's request-body fields (each endpoint names and takes its own). */
	fields: (ctx: IExecuteFunctions, itemIndex: number, options: ChatOptions) => IDataObject;
	/** The request body from the model, the wire messages and the option fields. */
	body: (
		ctx: IExecuteFunctions,
		itemIndex: number,
		parts: { model: string; messages: IDataObject[]; fields: IDataObject },
	) => IDataObject;
	/** Fields added when the answer is streamed. */
	streamFields: IDataObject;
	assembler: () => StreamAssembler;
	reply: (response: IDataObject) => Reply;
}

/** Reads the item's parameters, builds the body (images read and checked first), sends it once, shapes the answer. */
async function runChatOperation(
	ctx: IExecuteFunctions,
	itemIndex: number,
	operation: ChatOperation,
): Promise<IDataObject> {
	const model = readModel(ctx, itemIndex);
	const entries = ctx.getNodeParameter(`${operation.list.name}.values`, itemIndex, []) as MessageEntry[];
	const simplify = ctx.getNodeParameter('simplify', itemIndex, true) as boolean;
	const { options, extra } = readOptions(ctx, itemIndex);
	const messages = await messagesOf(ctx, entries, {
		endpoint: operation.endpoint,
		itemIndex,
		list: operation.list.label,
	});
	const fields = operation.fields(ctx, itemIndex, options);

	// Streamed or not is decided here, once: the request and the forwarding to n8n's chat follow it.
	const toN8nChat = streamsToN8nChat(ctx);
	let body = operation.body(ctx, itemIndex, { model, messages, fields });
	if (wantsStream(options.streaming, toN8nChat)) body = { ...body, ...operation.streamFields };
	body = mergeExtraBody(body, extra);
	// The final body decides, so {"stream": true} in Extra Body Fields streams like the option does.
	const stream =
		body.stream === true
			? {
					assembler: operation.assembler(),
					toN8nChat,
					maxAnswerBytes: maxAnswerBytes(options.maxAnswerSize),
					maxAnswerMs: totalBoundMsOf(MAX_ANSWER_TIME, options.maxAnswerTime),
				}
			: undefined;

	const response = await sendPaidChatRequest(ctx, {
		path: operation.path,
		body,
		itemIndex,
		timeoutMs: timeoutMsOf(options.timeout),
		stream,
	});
	// The answer was masked as it came; the reply joins its parts (two `output_text` parts may each hold half a key).
	const reply = redactDeep(operation.reply(response), await credentialSecrets(ctx));
	return replyJson(ctx, response, reply, {
		simplify,
		jsonOutput: options.jsonOutput === true,
		itemIndex,
	});
}

/** Temperature, Top P and the token limit, whose field each endpoint names its own way. */
export function samplingFields(options: ChatOptions, maxTokensField: string): IDataObject {
	const fields: IDataObject = {};
	if (options.temperature !== undefined) fields.temperature = options.temperature;
	if (options.topP !== undefined) fields.top_p = options.topP;
	if (options.maxTokens !== undefined) fields[maxTokensField] = options.maxTokens;
	return fields;
}

/**
 * A chat operation in the node's router: one output item per input item; a failed item keeps the partial answer,
 * and a run streamed to n8n's chat fails with the message in front (n8nChatStream.ts).
 */
export function routedChatOperation(properties: INodeProperties[], operation: ChatOperation): Operation {
	return {
		properties,
		policy: (ctx) => chatRunPolicy(ctx, [PARTIAL_CONTENT]),
		run: async (ctx, itemIndex) => ({
			json: await runChatOperation(ctx, itemIndex, operation),
			pairedItem: { item: itemIndex },
		}),
	};
}
