/** POST /v1/chat/completions in the OpenAI format, plain or streamed (SSE chunks, then `data: [DONE]`). */
import { randomBytes } from 'crypto';
import { z } from 'zod';
import { sendError, sendJson, type RequestContext } from './context';
import { isChatModel } from './models';
import { sendSse, type SseEvent } from './sse';
import { contentText, countTokens, deltas, echoReply, imagePartProblem, type Reply } from './text';
import { toolTurn, type ChatMessage, type ToolCall, type ToolChoice } from './toolCalls';

const Tool = z.object({
	type: z.literal('function'),
	function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.any().optional() }).passthrough(),
});
const ToolChoiceSchema = z.union([
	z.enum(['none', 'auto', 'required']),
	z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
]);

const ChatBody = z
	.object({
		model: z.string({ required_error: 'required' }),
		messages: z
			.array(
				// content may be absent on an assistant message that only calls tools (OpenAI allows it).
				z.object({ role: z.string(), content: z.union([z.string(), z.array(z.any()), z.null()]).optional() }).passthrough(),
				{ required_error: 'required' },
			)
			.min(1, 'must hold at least one message'),
		stream: z.boolean().optional(),
		temperature: z.number().min(0).max(2).optional(),
		max_tokens: z.number().int().positive().optional(),
		max_completion_tokens: z.number().int().positive().optional(),
		response_format: z.object({ type: z.string() }).passthrough().optional(),
		tools: z.array(Tool).optional(),
		tool_choice: ToolChoiceSchema.optional(),
		stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().optional(),
	})
	.passthrough();

export async function chatCompletions(ctx: RequestContext): Promise<void> {
	const parsed = ChatBody.safeParse(ctx.body);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		return sendError(ctx, 400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
	}
	const body = parsed.data;
	if (!isChatModel(body.model)) return sendError(ctx, 400, `model: '${body.model}' is not a chat model`);
	const imageProblem = imagePartProblem('messages', body.messages);
	if (imageProblem) return sendError(ctx, 400, imageProblem);

	const maxTokens = body.max_completion_tokens ?? body.max_tokens;
	const turn = toolTurn(body.messages as ChatMessage[], body.tools, body.tool_choice as ToolChoice | undefined);
	const calls: ToolCall[] = turn.kind === 'call' ? turn.calls : [];
	const call: ToolCall | undefined = calls[0];
	let reply: Reply;
	if (turn.kind === 'answer') reply = cutAt(turn.text, maxTokens);
	else {
		const userText = contentText([...body.messages].reverse().find((m) => m.role === 'user')?.content);
		const jsonMode = body.response_format !== undefined && body.response_format.type !== 'text';
		reply = echoReply(userText, jsonMode, maxTokens);
	}
	const promptTokens = body.messages.reduce((n, m) => n + countTokens(contentText(m.content)), 0);
	const completionTokens = call ? calls.reduce((n, c) => n + countTokens(c.function.arguments), 0) : countTokens(reply.text);
	const usage = {
		prompt_tokens: promptTokens,
		completion_tokens: completionTokens,
		total_tokens: promptTokens + completionTokens,
	};
	const id = `chatcmpl-${randomBytes(8).toString('hex')}`;
	const created = Math.floor(Date.now() / 1000);

	if (!body.stream) {
		const message = call
			? { role: 'assistant', content: null, tool_calls: calls }
			: { role: 'assistant', content: reply.text };
		return sendJson(ctx, 200, {
			id,
			object: 'chat.completion',
			created,
			model: body.model,
			choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : reply.finishReason }],
			usage,
		});
	}
	const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra = {}) => ({
		data: {
			id,
			object: 'chat.completion.chunk',
			created,
			model: body.model,
			choices: [{ index: 0, delta, finish_reason: finishReason }],
			...extra,
		},
	});
	// Default: usage on the finishing chunk. new-api (as OpenAI): usage only when stream_options.include_usage asks,
	// in a last chunk of its own with `choices: []`.
	const newApi = ctx.personality === 'new-api';
	const finalExtra = newApi ? {} : { usage };
	const usageChunk: SseEvent[] =
		newApi && body.stream_options?.include_usage === true
			? [{ data: { id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage } }]
			: [];
	const events: SseEvent[] = call
		? [
				// As OpenAI streams calls: each one's id, type and name first, then its arguments in pieces.
				...calls.flatMap((c, index) => [
					chunk({ ...(index === 0 ? { role: 'assistant', content: null } : {}), tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }, null),
					...pieces(c.function.arguments).map((args) => chunk({ tool_calls: [{ index, function: { arguments: args } }] }, null)),
				]),
				chunk({}, 'tool_calls', finalExtra),
			]
		: [
				chunk({ role: 'assistant', content: '' }, null),
				...deltas(reply.text).map((content) => chunk({ content }, null)),
				chunk({}, reply.finishReason, finalExtra),
			];
	await sendSse(ctx, [...events, ...usageChunk]);
}

/** A final answer cut at maxTokens words, as the echo is. */
function cutAt(text: string, maxTokens?: number): Reply {
	const words = text.match(/\S+\s*/g) ?? [];
	if (maxTokens !== undefined && maxTokens > 0 && words.length > maxTokens) {
		return { text: words.slice(0, maxTokens).join('').trimEnd(), finishReason: 'length' };
	}
	return { text, finishReason: 'stop' };
}

/** Tool-call arguments in a few pieces (clients must join them before parsing). */
function pieces(text: string): string[] {
	const size = Math.max(1, Math.ceil(text.length / 3));
	const out: string[] = [];
	for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
	return out.length > 0 ? out : [''];
}
