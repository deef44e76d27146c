/** POST /v1/chat/completions in the OpenAI format, plain or streamed (SSE chunks, then `data: [DONE]`). */
import { randomBytes } from 'crypto';
import { z } from 'zod';
import { sendError, sendJson, type RequestContext } from './context';
import { isChatModel } from './models';
import { sendSse, type SseEvent } from './sse';
import { contentText, countTokens, deltas, echoReply } from './text';

const ChatBody = z
	.object({
		model: z.string({ required_error: 'required' }),
		messages: z
			.array(
				z.object({ role: z.string(), content: z.union([z.string(), z.array(z.any()), z.null()]) }).passthrough(),
				{ required_error: 'required' },
			)
			.min(1, 'must hold at least one message'),
		stream: z.boolean().optional(),
		temperature: z.number().min(0).max(2).optional(),
		max_tokens: z.number().int().positive().optional(),
		max_completion_tokens: z.number().int().positive().optional(),
		response_format: z.object({ type: z.string() }).passthrough().optional(),
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

	const userText = contentText([...body.messages].reverse().find((m) => m.role === 'user')?.content);
	const jsonMode = body.response_format !== undefined && body.response_format.type !== 'text';
	const reply = echoReply(userText, jsonMode, body.max_completion_tokens ?? body.max_tokens);
	const promptTokens = body.messages.reduce((n, m) => n + countTokens(contentText(m.content)), 0);
	const completionTokens = countTokens(reply.text);
	const usage = {
		prompt_tokens: promptTokens,
		completion_tokens: completionTokens,
		total_tokens: promptTokens + completionTokens,
	};
	const id = `chatcmpl-${randomBytes(8).toString('hex')}`;
	const created = Math.floor(Date.now() / 1000);

	if (!body.stream) {
		return sendJson(ctx, 200, {
			id,
			object: 'chat.completion',
			created,
			model: body.model,
			choices: [
				{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: reply.finishReason },
			],
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
	const events: SseEvent[] = [
		chunk({ role: 'assistant', content: '' }, null),
		...deltas(reply.text).map((content) => chunk({ content }, null)),
		chunk({}, reply.finishReason, { usage }),
	];
	await sendSse(ctx, events);
}
