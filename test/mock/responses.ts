/** POST /v1/responses in the OpenAI Responses format, plain or streamed (typed events, then `data: [DONE]`). */
import { randomBytes } from 'crypto';
import { z } from 'zod';
import { sendError, sendJson, type RequestContext } from './context';
import { isChatModel } from './models';
import { sendSse, type SseEvent } from './sse';
import { contentText, countTokens, deltas, echoReply, imagePartProblem } from './text';

const InputItem = z
	.object({ role: z.string().optional(), type: z.string().optional(), content: z.any().optional() })
	.passthrough();

const ResponsesBody = z
	.object({
		model: z.string({ required_error: 'required' }),
		input: z.union([z.string(), z.array(InputItem).min(1)], {
			errorMap: () => ({ message: 'must be a string or a non-empty array of input items' }),
		}),
		instructions: z.string().optional(),
		stream: z.boolean().optional(),
		temperature: z.number().min(0).max(2).optional(),
		max_output_tokens: z.number().int().positive().optional(),
		text: z.object({ format: z.object({ type: z.string() }).passthrough().optional() }).passthrough().optional(),
	})
	.passthrough();

type Body = z.infer<typeof ResponsesBody>;

function lastUserText(input: Body['input']): string {
	if (typeof input === 'string') return input;
	const user = [...input].reverse().find((item) => (item.role ?? 'user') === 'user');
	return contentText(user?.content);
}

function inputTokens(body: Body): number {
	const texts = typeof body.input === 'string' ? [body.input] : body.input.map((item) => contentText(item.content));
	return [body.instructions ?? '', ...texts].reduce((n, t) => n + countTokens(t), 0);
}

export async function responses(ctx: RequestContext): Promise<void> {
	const parsed = ResponsesBody.safeParse(ctx.body);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		return sendError(ctx, 400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
	}
	const body = parsed.data;
	if (!isChatModel(body.model)) return sendError(ctx, 400, `model: '${body.model}' is not a chat model`);
	const imageProblem = typeof body.input === 'string' ? undefined : imagePartProblem('input', body.input);
	if (imageProblem) return sendError(ctx, 400, imageProblem);

	const jsonMode = body.text?.format !== undefined && body.text.format.type !== 'text';
	const reply = echoReply(lastUserText(body.input), jsonMode, body.max_output_tokens);
	const usage = {
		input_tokens: inputTokens(body),
		output_tokens: countTokens(reply.text),
		total_tokens: inputTokens(body) + countTokens(reply.text),
	};
	const id = `resp_${randomBytes(8).toString('hex')}`;
	const itemId = `msg_${randomBytes(8).toString('hex')}`;
	const part = { type: 'output_text', text: reply.text, annotations: [] };
	const item = { type: 'message', id: itemId, status: 'completed', role: 'assistant', content: [part] };
	const status = reply.finishReason === 'length' ? 'incomplete' : 'completed';
	const base = {
		id,
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		model: body.model,
		instructions: body.instructions ?? null,
	};
	const full = {
		...base,
		status,
		...(status === 'incomplete' ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
		output: [item],
		output_text: reply.text,
		usage,
	};
	if (!body.stream) return sendJson(ctx, 200, full);

	let sequence = 0;
	const ev = (type: string, data: Record<string, unknown>): SseEvent => ({
		event: type,
		data: { type, sequence_number: sequence++, ...data },
	});
	const at = { item_id: itemId, output_index: 0, content_index: 0 };
	await sendSse(ctx, [
		ev('response.created', { response: { ...base, status: 'in_progress', output: [] } }),
		ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
		ev('response.content_part.added', { ...at, part: { ...part, text: '' } }),
		...deltas(reply.text).map((delta) => ev('response.output_text.delta', { ...at, delta })),
		ev('response.output_text.done', { ...at, text: reply.text }),
		ev('response.content_part.done', { ...at, part }),
		ev('response.output_item.done', { output_index: 0, item }),
		ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: full }),
	]);
}
