import type { IDataObject } from 'n8n-workflow';
import type {
	FinishReason,
	GenerateResult,
	Message,
	MessageContent,
	TokenUsage,
	Tool,
} from '@n8n/ai-node-sdk';

/**
 * The SDK's messages and tools as an OpenAI-format chat-completions request, and a `chat.completion` as the SDK's
 * GenerateResult. Pure: no HTTP, no SDK at run time (types only).
 */

/** The SDK's JSON Schema of a tool (it turns a zod schema into one), passed in so this file needs no SDK at run time. */
type ToolSchemaOf = (tool: Extract<Tool, { type: 'function' }>) => unknown;

function textOf(content: MessageContent[]): string {
	return content
		.filter((block): block is Extract<MessageContent, { type: 'text' }> => block.type === 'text')
		.map((block) => block.text)
		.join('');
}

/** A file block as an image part: its URL when it has one, else a data: URL of its bytes. */
function imagePart(block: Extract<MessageContent, { type: 'file' }>): IDataObject | undefined {
	const mediaType = block.mediaType ?? '';
	const url = (block.providerMetadata as { url?: unknown } | undefined)?.url;
	if (typeof url === 'string' && url) return { type: 'image_url', image_url: { url } };
	if (!mediaType.startsWith('image/')) return undefined;
	const data = typeof block.data === 'string' ? block.data : Buffer.from(block.data).toString('base64');
	const dataUrl = data.startsWith('data:') ? data : `data:${mediaType};base64,${data}`;
	return { type: 'image_url', image_url: { url: dataUrl } };
}

function userContent(content: MessageContent[]): string | IDataObject[] {
	const images = content
		.filter((block): block is Extract<MessageContent, { type: 'file' }> => block.type === 'file')
		.map(imagePart)
		.filter((part): part is IDataObject => part !== undefined);
	if (images.length === 0) return textOf(content);
	const text = textOf(content);
	return [...(text ? [{ type: 'text', text }] : []), ...images];
}

function resultText(result: unknown): string {
	if (typeof result === 'string') return result;
	if (Array.isArray(result) && result.every((part) => (part as { type?: unknown })?.type === 'text')) {
		return (result as Array<{ text: string }>).map((part) => part.text).join('');
	}
	return JSON.stringify(result) ?? '';
}

/** One SDK message as the OpenAI-format message(s): a tool message holds one tool result per wire message. */
function wireMessages(message: Message): IDataObject[] {
	const named = message.name ? { name: message.name } : {};
	if (message.role === 'tool') {
		return message.content
			.filter((block): block is Extract<MessageContent, { type: 'tool-result' }> => block.type === 'tool-result')
			.map((block) => ({ role: 'tool', tool_call_id: block.toolCallId, content: resultText(block.result) }));
	}
	if (message.role === 'assistant') {
		const calls = message.content
			.filter((block): block is Extract<MessageContent, { type: 'tool-call' }> => block.type === 'tool-call')
			.map((block) => ({
				id: block.toolCallId,
				type: 'function',
				function: { name: block.toolName, arguments: block.input },
			}));
		// An empty string beside tool calls, as LangChain's OpenAI client sends it (services take it; some refuse null).
		const wire: IDataObject = { role: 'assistant', content: textOf(message.content), ...named };
		if (calls.length > 0) wire.tool_calls = calls;
		return [wire];
	}
	if (message.role === 'user') return [{ role: 'user', content: userContent(message.content), ...named }];
	return [{ role: message.role, content: textOf(message.content), ...named }];
}

export function wireMessageList(messages: Message[]): IDataObject[] {
	return messages.flatMap(wireMessages);
}

export function wireTools(tools: Tool[], schemaOf: ToolSchemaOf): IDataObject[] {
	return tools
		.filter((tool): tool is Extract<Tool, { type: 'function' }> => tool.type === 'function')
		.map((tool) => ({
			type: 'function',
			function: {
				name: tool.name,
				...(tool.description ? { description: tool.description } : {}),
				parameters: schemaOf(tool) as IDataObject,
				...(tool.strict !== undefined ? { strict: tool.strict } : {}),
			},
		}));
}

const FINISH_REASONS: Record<string, FinishReason> = {
	stop: 'stop',
	length: 'length',
	tool_calls: 'tool-calls',
	function_call: 'tool-calls',
	content_filter: 'content-filter',
};

export function finishReasonOf(reason: unknown): FinishReason | undefined {
	if (typeof reason !== 'string' || reason === '') return undefined;
	return FINISH_REASONS[reason] ?? 'other';
}

export function usageOf(usage: unknown): TokenUsage | undefined {
	if (!usage || typeof usage !== 'object') return undefined;
	const raw = usage as IDataObject;
	const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
	const promptTokens = number(raw.prompt_tokens);
	const completionTokens = number(raw.completion_tokens);
	const result: TokenUsage = {
		promptTokens,
		completionTokens,
		totalTokens: number(raw.total_tokens) || promptTokens + completionTokens,
	};
	const cached = (raw.prompt_tokens_details as IDataObject | undefined)?.cached_tokens;
	if (typeof cached === 'number') result.inputTokenDetails = { cacheRead: cached };
	const reasoning = (raw.completion_tokens_details as IDataObject | undefined)?.reasoning_tokens;
	if (typeof reasoning === 'number') result.outputTokenDetails = { reasoning };
	return result;
}

interface WireToolCall {
	id?: string;
	name: string;
	arguments: string;
}

/** The tool calls of a choice's message, with their arguments as the JSON text the model wrote. */
export function toolCallsOf(message: IDataObject | undefined): WireToolCall[] {
	const calls = Array.isArray(message?.tool_calls) ? (message.tool_calls as IDataObject[]) : [];
	return calls.map((call) => {
		const fn = (call.function ?? {}) as IDataObject;
		return {
			id: typeof call.id === 'string' ? call.id : undefined,
			name: typeof fn.name === 'string' ? fn.name : '',
			arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
		};
	});
}

/** The first choice of a `chat.completion` (streamed and assembled, or not), as the SDK's result. */
export function generateResultOf(completion: IDataObject): GenerateResult {
	const choice = (Array.isArray(completion.choices) ? (completion.choices[0] as IDataObject) : undefined) ?? {};
	const message = (choice.message ?? {}) as IDataObject;
	const content: MessageContent[] = [];
	if (typeof message.content === 'string' && message.content !== '') {
		content.push({ type: 'text', text: message.content });
	}
	for (const call of toolCallsOf(message)) {
		content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
	}
	return {
		id: typeof completion.id === 'string' ? completion.id : undefined,
		finishReason: finishReasonOf(choice.finish_reason),
		usage: usageOf(completion.usage),
		message: {
			role: 'assistant',
			content,
			...(typeof completion.id === 'string' ? { id: completion.id } : {}),
		},
	};
}
