import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

/** What the node emits: a simplified item (content, role, finish_reason, usage, model) or the full response. */

export const simplifyProperty: INodeProperties = {
	displayName: 'Simplify Output',
	name: 'simplify',
	type: 'boolean',
	default: true,
	description:
		'Whether to return only content, role, finish_reason, usage and model (and refusal and tool_calls when the model ' +
			'gave them) instead of the full response of the service',
};

export interface Reply {
	content: string | null;
	role: string;
	finish_reason: string | null;
	usage: IDataObject | null;
	model: string | null;
	/** The model declined: its explanation (chat `message.refusal`, Responses `refusal` parts). */
	refusal?: string;
	/** Calls the model asks for: chat `tool_calls`, Responses `function_call` items said the same way. */
	tool_calls?: IDataObject[];
}

/** The first choice of a `chat.completion`. */
export function chatCompletionReply(response: IDataObject): Reply {
	const choices = Array.isArray(response.choices) ? (response.choices as IDataObject[]) : [];
	const choice = choices[0] ?? {};
	const message = (choice.message ?? {}) as IDataObject;
	const reply: Reply = {
		content: typeof message.content === 'string' ? message.content : null,
		role: typeof message.role === 'string' ? message.role : 'assistant',
		finish_reason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
		usage: (response.usage as IDataObject | undefined) ?? null,
		model: typeof response.model === 'string' ? response.model : null,
	};
	if (typeof message.refusal === 'string' && message.refusal !== '') reply.refusal = message.refusal;
	if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
		reply.tool_calls = message.tool_calls as IDataObject[];
	}
	return reply;
}

function outputItems(response: IDataObject): IDataObject[] {
	return Array.isArray(response.output) ? (response.output as IDataObject[]) : [];
}

/** The `refusal` parts of the response's messages, joined; undefined when the model did not decline. */
function responseRefusal(response: IDataObject): string | undefined {
	const text = outputItems(response)
		.filter((item) => item.type === 'message')
		.flatMap((item) => (Array.isArray(item.content) ? (item.content as IDataObject[]) : []))
		.filter((part) => part.type === 'refusal' && typeof part.refusal === 'string')
		.map((part) => part.refusal as string)
		.join('');
	return text === '' ? undefined : text;
}

/** `function_call` output items in the chat `tool_calls` shape (id is the `call_id` an answer must quote). */
function responseToolCalls(response: IDataObject): IDataObject[] | undefined {
	const calls = outputItems(response)
		.filter((item) => item.type === 'function_call')
		.map((item) => ({
			id: item.call_id ?? item.id,
			type: 'function',
			function: { name: item.name, arguments: item.arguments },
		}));
	return calls.length > 0 ? calls : undefined;
}

/** All `output_text` parts of the response's messages, in order (the API's own `output_text` when present). */
export function responseText(response: IDataObject): string {
	if (typeof response.output_text === 'string') return response.output_text;
	return outputItems(response)
		.filter((item) => item.type === 'message')
		.flatMap((item) => (Array.isArray(item.content) ? (item.content as IDataObject[]) : []))
		.filter((part) => part.type === 'output_text' && typeof part.text === 'string')
		.map((part) => part.text as string)
		.join('');
}

/** Responses report `status`; said the chat way: completed → stop, cut at the token limit → length. */
export function responseFinishReason(response: IDataObject): string | null {
	const status = typeof response.status === 'string' ? response.status : null;
	if (status === 'completed') return 'stop';
	const reason = (response.incomplete_details as IDataObject | undefined)?.reason;
	if (reason === 'max_output_tokens') return 'length';
	if (typeof reason === 'string') return reason;
	return status;
}

export function responseReply(response: IDataObject): Reply {
	const reply: Reply = {
		content: responseText(response),
		role: 'assistant',
		finish_reason: responseFinishReason(response),
		usage: (response.usage as IDataObject | undefined) ?? null,
		model: typeof response.model === 'string' ? response.model : null,
	};
	const refusal = responseRefusal(response);
	if (refusal !== undefined) reply.refusal = refusal;
	const toolCalls = responseToolCalls(response);
	if (toolCalls !== undefined) reply.tool_calls = toolCalls;
	return reply;
}

/** Models sometimes wrap JSON in a Markdown code fence even in JSON mode. */
function withoutFence(text: string): string {
	const match = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(text.trim());
	return match ? match[1] : text;
}

/** JSON output mode: the reply parsed, or an error that says what came back and why it may not be JSON. */
function parseJsonReply(ctx: IExecuteFunctions, reply: Reply, itemIndex: number): IDataObject | IDataObject[] {
	const text = reply.content ?? '';
	try {
		const parsed = JSON.parse(withoutFence(text)) as unknown;
		if (parsed !== null && typeof parsed === 'object') return parsed as IDataObject | IDataObject[];
	} catch {
		// reported below
	}
	const cut =
		reply.finish_reason === 'length'
			? ' The answer was cut at the token limit (finish_reason "length"): raise "Maximum Number of Tokens".'
			: '';
	const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
	if (reply.refusal !== undefined) {
		throw new NodeOperationError(ctx.getNode(), `The model refused: ${reply.refusal}`, {
			description: 'JSON Output is on, but the model declined to answer (its refusal is above).',
			itemIndex,
		});
	}
	throw new NodeOperationError(ctx.getNode(), 'The model did not answer with a JSON object', {
		description: `JSON Output is on, but the reply is not a JSON object: "${snippet}".${cut} Ask for JSON in the ` +
			`prompt too, or turn JSON Output off.`,
		itemIndex,
	});
}

/** The item's JSON: the reply simplified (content parsed in JSON mode) or the full response. */
export function replyJson(
	ctx: IExecuteFunctions,
	response: IDataObject,
	reply: Reply,
	opts: { simplify: boolean; jsonOutput: boolean; itemIndex: number },
): IDataObject {
	const parsed = opts.jsonOutput ? parseJsonReply(ctx, reply, opts.itemIndex) : undefined;
	if (!opts.simplify) return response;
	const json: IDataObject = { ...reply };
	if (parsed !== undefined) json.content = parsed as IDataObject;
	return json;
}
