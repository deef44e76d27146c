/**
 * Validation of POST /v1/tasks/vendor: zod for the shape, the capability matrix for everything model-specific.
 * Every rejection reads `<field>: <what is wrong> (model <id>)`.
 */
import { z } from 'zod';
import { findVideoModel, VIDEO_MODEL_IDS, type VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';

const urlList = z.array(z.string({ invalid_type_error: 'must be a URL string' }), {
	invalid_type_error: 'must be an array of URLs',
});
const frame = z.union([z.string(), z.array(z.string({ invalid_type_error: 'must be a URL string' }))], {
	errorMap: () => ({ message: 'must be a URL or an array with exactly one URL' }),
});

const SEED_MESSAGE = 'must be an integer or an integer string';

const VendorBody = z
	.object({
		model: z.string({ required_error: 'required', invalid_type_error: 'must be a string' }),
		prompt: z
			.string({ required_error: 'required', invalid_type_error: 'must be a string' })
			.refine((p) => p.trim().length > 0, 'must not be empty'),
		duration: z.number({ invalid_type_error: 'must be an integer' }).int('must be an integer'),
		aspect_ratio: z.string({ invalid_type_error: 'must be a string' }),
		resolution: z.string({ invalid_type_error: 'must be a string' }),
		seed: z.union([z.number().int(SEED_MESSAGE), z.string().regex(/^-?\d+$/, SEED_MESSAGE)], {
			errorMap: () => ({ message: SEED_MESSAGE }),
		}),
		reference_images: urlList,
		reference_videos: urlList,
		reference_audios: urlList,
		first_image: frame,
		last_image: frame,
		generate_audio: z.union([z.boolean(), z.enum(['true', 'false'])], {
			errorMap: () => ({ message: "must be a boolean (or 'true'/'false')" }),
		}),
	})
	.partial({
		duration: true,
		aspect_ratio: true,
		resolution: true,
		seed: true,
		reference_images: true,
		reference_videos: true,
		reference_audios: true,
		first_image: true,
		last_image: true,
		generate_audio: true,
	})
	.strict();

export type VendorRequest = z.infer<typeof VendorBody>;

export type Validation = { ok: true; request: VendorRequest; model: VideoModelCapabilities } | { ok: false; message: string };

const isHttpUrl = (value: string): boolean => {
	try {
		const url = new URL(value);
		return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
	} catch {
		return false;
	}
};

function checkUrls(field: string, urls: string[]): string | undefined {
	const bad = urls.findIndex((u) => !isHttpUrl(u));
	return bad === -1 ? undefined : `${field}[${bad}]: must be an http(s) URL`;
}

const REFERENCE_FIELDS = [
	['reference_images', 'images'],
	['reference_videos', 'videos'],
	['reference_audios', 'audios'],
] as const;

/** Model-specific rules, strictly from the matrix. Returns `<field>: <problem>` or undefined. */
function checkAgainstMatrix(req: VendorRequest, m: VideoModelCapabilities): string | undefined {
	const { duration } = m;
	if (req.duration === undefined) {
		if (duration.required) return `duration: required (${duration.min}-${duration.max} seconds)`;
	} else if (req.duration < duration.min || req.duration > duration.max) {
		return `duration: ${req.duration} is outside ${duration.min}-${duration.max} seconds`;
	}
	if (req.aspect_ratio !== undefined && !m.aspectRatios.includes(req.aspect_ratio)) {
		return `aspect_ratio: '${req.aspect_ratio}' is not allowed; allowed: ${m.aspectRatios.join(', ')}`;
	}
	if (req.resolution !== undefined && !m.resolutions.includes(req.resolution)) {
		return `resolution: '${req.resolution}' is not allowed; allowed: ${m.resolutions.join(', ')}`;
	}
	if (req.seed !== undefined && !m.seed) return 'seed: not supported';
	for (const [field, kind] of REFERENCE_FIELDS) {
		const urls = req[field];
		if (urls === undefined) continue;
		const limit = m.references[kind];
		if (limit === 0) return `${field}: not supported`;
		if (urls.length > limit) return `${field}: at most ${limit} allowed, got ${urls.length}`;
		const bad = checkUrls(field, urls);
		if (bad) return bad;
	}
	for (const [field, supported] of [
		['first_image', m.firstImage],
		['last_image', m.lastImage],
	] as const) {
		const value = req[field];
		if (value === undefined) continue;
		if (!supported) return `${field}: not supported`;
		const urls = Array.isArray(value) ? value : [value];
		if (urls.length !== 1) return `${field}: an array must hold exactly one URL, got ${urls.length}`;
		const bad = checkUrls(field, urls);
		if (bad) return Array.isArray(value) ? bad : `${field}: must be an http(s) URL`;
	}
	if (req.generate_audio !== undefined && !m.audio.supported) return 'generate_audio: not supported';
	return undefined;
}

function describeZodIssue(issue: z.ZodIssue): string {
	if (issue.code === 'unrecognized_keys') return `${issue.keys[0]}: unknown field`;
	const field = issue.path.length ? issue.path.join('.').replace(/\.(\d+)/g, '[$1]') : 'body';
	return `${field}: ${issue.message}`;
}

export function validateVendorBody(body: unknown): Validation {
	if (!body || typeof body !== 'object' || Array.isArray(body)) {
		return { ok: false, message: 'body: must be a JSON object' };
	}
	const raw = body as Record<string, unknown>;
	if (raw.model === undefined) return { ok: false, message: 'model: required' };
	if (typeof raw.model !== 'string') return { ok: false, message: 'model: must be a string' };
	const model = findVideoModel(raw.model);
	if (!model) {
		return {
			ok: false,
			message: `model: '${raw.model}' is not a video model; known: ${VIDEO_MODEL_IDS.join(', ')}`,
		};
	}
	const suffix = ` (model ${model.id})`;
	const parsed = VendorBody.safeParse(body);
	if (!parsed.success) {
		// Unknown fields first: they are the most common mistake and the least ambiguous.
		const issues = [...parsed.error.issues].sort(
			(a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'),
		);
		return { ok: false, message: describeZodIssue(issues[0]) + suffix };
	}
	const problem = checkAgainstMatrix(parsed.data, model);
	if (problem) return { ok: false, message: problem + suffix };
	return { ok: true, request: parsed.data, model };
}
