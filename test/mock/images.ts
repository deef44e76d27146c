/** POST /v1/images/generations (OpenAI format) and the CDN-like GET /files/images/:id.png. */
import { z } from 'zod';
import { sendError, sendJson, sendStream, type RequestContext } from './context';
import { deterministicPng, sha256Hex } from './media';
import { isImageModel } from './models';
import type { ImageRecord, MockState } from './types';

export const IMAGE_SIZES = ['256x256', '512x512', '1024x1024'] as const;

const ImageBody = z
	.object({
		model: z.string({ required_error: 'required' }),
		prompt: z
			.string({ required_error: 'required' })
			.refine((p) => p.trim().length > 0, 'must not be empty'),
		n: z.number().int('must be an integer').min(1, 'must be 1-4').max(4, 'must be 1-4').default(1),
		size: z.enum(IMAGE_SIZES).default('1024x1024'),
		response_format: z.enum(['b64_json', 'url']).default('url'),
	})
	.passthrough();

/** Same model, prompt, size and index → same id and same bytes. */
function imageFor(state: MockState, model: string, prompt: string, size: string, index: number): ImageRecord {
	const id = `img_${sha256Hex(`${model}\n${prompt}\n${size}\n${index}`).slice(0, 24)}`;
	const known = state.images.get(id);
	if (known) return known;
	const [w, h] = size.split('x').map(Number);
	const bytes = deterministicPng(`${model}\n${prompt}\n${index}`, w, h);
	const record = { id, model, prompt, index, size, bytes, sha256: sha256Hex(bytes) };
	state.images.set(id, record);
	return record;
}

export function imageGenerations(ctx: RequestContext): void {
	const parsed = ImageBody.safeParse(ctx.body);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		return sendError(ctx, 400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
	}
	const { model, prompt, n, size, response_format } = parsed.data;
	if (!isImageModel(model)) return sendError(ctx, 400, `model: '${model}' is not an image model`);
	const images = Array.from({ length: n }, (_, i) => imageFor(ctx.state, model, prompt, size, i));
	ctx.entry.outcome = `images:${images.map((img) => img.id).join(',')}`;
	sendJson(ctx, 200, {
		created: Math.floor(Date.now() / 1000),
		data: images.map((img) =>
			response_format === 'b64_json'
				? { b64_json: img.bytes.toString('base64') }
				: { url: `${ctx.state.baseUrl}/files/images/${img.id}.png` },
		),
	});
}

export async function imageFile(ctx: RequestContext, id: string): Promise<void> {
	const img = ctx.state.images.get(id);
	if (!img) return sendError(ctx, 404, `image '${id}' not found`);
	await sendStream(
		ctx,
		200,
		{ 'Content-Type': 'image/png', 'Content-Length': String(img.bytes.length) },
		[img.bytes],
	);
}
