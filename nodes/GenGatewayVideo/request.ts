import { findVideoModel, VIDEO_MODEL_IDS } from './matrix';
import type { VideoModelCapabilities } from './matrix';

/**
 * Parameters → a validated request body for POST /v1/tasks/vendor, or an InvalidVideoRequest that names the field,
 * the model and what is allowed. Pure: no n8n, no I/O, so every rule of sections 2.3 and 7 is tested directly.
 */

/** What the user set; `undefined` means "not set" (the field is then not sent). */
export interface VideoInput {
	prompt?: unknown;
	duration?: unknown;
	aspectRatio?: unknown;
	resolution?: unknown;
	seed?: unknown;
	generateAudio?: unknown;
	referenceImages?: unknown;
	referenceVideos?: unknown;
	referenceAudios?: unknown;
	firstImage?: unknown;
	lastImage?: unknown;
}

export interface VideoRequestBody {
	model: string;
	prompt: string;
	duration?: number;
	aspect_ratio?: string;
	resolution?: string;
	seed?: number | string;
	generate_audio?: boolean;
	reference_images?: string[];
	reference_videos?: string[];
	reference_audios?: string[];
	first_image?: string;
	last_image?: string;
}

export class InvalidVideoRequest extends Error {
	constructor(
		readonly field: string,
		readonly model: string,
		readonly problem: string,
	) {
		super(`${field}: ${problem}${model ? ` (model ${model})` : ''}`);
		this.name = 'InvalidVideoRequest';
	}
}

const MAX_URL_LENGTH = 4096;

function describeValue(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return `an array of ${value.length}`;
	if (typeof value === 'object') return 'an object';
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	const text = String(value);
	return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

function isEmpty(value: unknown): boolean {
	return (
		value === undefined ||
		value === null ||
		(typeof value === 'string' && value.trim() === '') ||
		(Array.isArray(value) && value.length === 0)
	);
}

function checkUrl(field: string, model: string, value: unknown): string {
	if (typeof value !== 'string') {
		throw new InvalidVideoRequest(field, model, `each entry must be an HTTP(S) URL, got ${describeValue(value)}`);
	}
	const text = value.trim();
	let url: URL | undefined;
	try {
		url = text.length <= MAX_URL_LENGTH ? new URL(text) : undefined;
	} catch {
		url = undefined;
	}
	if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
		throw new InvalidVideoRequest(
			field,
			model,
			`${describeValue(text)} is not an HTTP(S) URL; file:// URLs and local paths are not allowed (the service must be able to fetch it)`,
		);
	}
	return text;
}

/** A URL list from an array (an expression) or from text with URLs separated by commas, spaces or new lines. */
export function parseUrlList(field: string, model: string, value: unknown): string[] {
	if (isEmpty(value)) return [];
	const entries = Array.isArray(value)
		? value
		: typeof value === 'string'
			? value.split(/[\s,]+/).filter((part) => part !== '')
			: [value];
	return entries.map((entry) => checkUrl(field, model, entry));
}

function parseSingleUrl(field: string, model: string, value: unknown): string {
	if (Array.isArray(value)) {
		if (value.length !== 1) {
			throw new InvalidVideoRequest(field, model, `takes exactly one URL, got ${value.length}`);
		}
		return checkUrl(field, model, value[0]);
	}
	return checkUrl(field, model, value);
}

function parseInteger(value: unknown): number | undefined {
	if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
	if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) {
		const parsed = Number(value.trim());
		return Number.isSafeInteger(parsed) ? parsed : undefined;
	}
	return undefined;
}

function parseDuration(model: VideoModelCapabilities, value: unknown): number | undefined {
	const rule = model.duration;
	const allowed = `${rule.min}–${rule.max} seconds, a whole number`;
	if (isEmpty(value)) {
		if (rule.required) throw new InvalidVideoRequest('duration', model.id, `is required; allowed: ${allowed}`);
		return undefined;
	}
	const seconds = parseInteger(value);
	if (seconds === undefined || seconds < rule.min || seconds > rule.max) {
		throw new InvalidVideoRequest('duration', model.id, `${describeValue(value)} is not allowed; allowed: ${allowed}`);
	}
	return seconds;
}

function parseChoice(field: string, model: VideoModelCapabilities, value: unknown, allowed: readonly string[]): string {
	if (typeof value !== 'string' || !allowed.includes(value)) {
		throw new InvalidVideoRequest(field, model.id, `${describeValue(value)} is not allowed; allowed: ${allowed.join(', ')}`);
	}
	return value;
}

function parseSeed(model: VideoModelCapabilities, value: unknown): number | string {
	const integer = parseInteger(value);
	if (integer !== undefined) return integer;
	// An integer too large for a JS number still is an integer: pass the digits on untouched.
	if (typeof value === 'string' && /^\s*-?\d{1,64}\s*$/.test(value)) return value.trim();
	throw new InvalidVideoRequest('seed', model.id, `${describeValue(value)} is not an integer`);
}

function parseBoolean(model: VideoModelCapabilities, value: unknown): boolean {
	if (typeof value === 'boolean') return value;
	if (value === 'true' || value === 'false') return value === 'true';
	throw new InvalidVideoRequest('generateAudio', model.id, `${describeValue(value)} is not true or false`);
}

function unsupported(field: string, model: VideoModelCapabilities, what: string): never {
	throw new InvalidVideoRequest(field, model.id, `this model does not support ${what}; leave it empty`);
}

function parseReferences(
	field: string,
	model: VideoModelCapabilities,
	value: unknown,
	limit: number,
	what: string,
): string[] | undefined {
	if (isEmpty(value)) return undefined;
	if (limit === 0) unsupported(field, model, what);
	const urls = parseUrlList(field, model.id, value);
	if (urls.length > limit) {
		throw new InvalidVideoRequest(field, model.id, `${urls.length} ${what} given; allowed: at most ${limit}`);
	}
	return urls.length > 0 ? urls : undefined;
}

/** The request body for a model and the fields the user set, or an InvalidVideoRequest. */
export function buildVideoRequest(modelId: unknown, input: VideoInput): VideoRequestBody {
	const model = typeof modelId === 'string' ? findVideoModel(modelId.trim()) : undefined;
	if (!model) {
		throw new InvalidVideoRequest(
			'model',
			'',
			`${describeValue(modelId)} is not a model of the capability matrix; allowed: ${VIDEO_MODEL_IDS.join(', ')}`,
		);
	}
	if (typeof input.prompt !== 'string' || input.prompt.trim() === '') {
		throw new InvalidVideoRequest('prompt', model.id, 'is required and must be non-empty text');
	}
	const body: VideoRequestBody = { model: model.id, prompt: input.prompt };

	const duration = parseDuration(model, input.duration);
	if (duration !== undefined) body.duration = duration;
	if (!isEmpty(input.aspectRatio)) {
		body.aspect_ratio = parseChoice('aspectRatio', model, input.aspectRatio, model.aspectRatios);
	}
	if (!isEmpty(input.resolution)) {
		body.resolution = parseChoice('resolution', model, input.resolution, model.resolutions);
	}
	if (!isEmpty(input.seed)) {
		if (!model.seed) unsupported('seed', model, 'a seed');
		body.seed = parseSeed(model, input.seed);
	}
	if (!isEmpty(input.generateAudio)) {
		if (!model.audio.supported) unsupported('generateAudio', model, 'audio generation');
		body.generate_audio = parseBoolean(model, input.generateAudio);
	}
	if (!isEmpty(input.firstImage)) {
		if (!model.firstImage) unsupported('firstImage', model, 'a first frame');
		body.first_image = parseSingleUrl('firstImage', model.id, input.firstImage);
	}
	if (!isEmpty(input.lastImage)) {
		if (!model.lastImage) unsupported('lastImage', model, 'a last frame');
		body.last_image = parseSingleUrl('lastImage', model.id, input.lastImage);
	}
	const refs = model.references;
	const images = parseReferences('referenceImages', model, input.referenceImages, refs.images, 'reference images');
	const videos = parseReferences('referenceVideos', model, input.referenceVideos, refs.videos, 'reference videos');
	const audios = parseReferences('referenceAudios', model, input.referenceAudios, refs.audios, 'reference audios');
	if (images) body.reference_images = images;
	if (videos) body.reference_videos = videos;
	if (audios) body.reference_audios = audios;
	return body;
}
