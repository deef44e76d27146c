import { VIDEO_MODELS } from '../../nodes/GenGatewayVideo/model/matrix';
import type { VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';

/**
 * An independent oracle for the Video node's Generate parameters: given the model and the raw field values n8n hands
 * the node (whatever an expression produced), says whether the matrix allows the request and, if so, exactly which
 * body the service must receive. Written from the meaning of the contract (sections 2.3, 4.3) and of the node's
 * fields (n8n pre-fills every shown field with its default; a value equal to that pre-fill is "not set", a value the user
 * did not set is never sent, a required one takes the model's default), with the matrix imported as data. It never calls the node's validator.
 */

/** Raw values per node parameter; `undefined` = the parameter was not there at all. */
export interface RawParameters {
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

export type Verdict =
	| { valid: true; body: Record<string, unknown> }
	/** Every field that breaks a rule; the node names one of them. */
	| { valid: false; fields: string[] };

/** The node's own limit on one URL (beyond the contract: longer text is not a usable link). */
export const MAX_URL_CHARS = 4096;

type Field = keyof RawParameters;

interface FieldRule {
	supported(m: VideoModelCapabilities): boolean;
	/** What n8n shows in the field before the user types anything, for a model that has the field. */
	prefill(m: VideoModelCapabilities): unknown;
}

const always = () => true;
const RULES: Record<Exclude<Field, 'prompt'>, FieldRule> = {
	duration: { supported: always, prefill: (m) => m.duration.default },
	aspectRatio: { supported: always, prefill: () => '' },
	resolution: { supported: always, prefill: (m) => m.defaultResolution },
	seed: { supported: (m) => m.seed, prefill: () => '' },
	generateAudio: { supported: (m) => m.audio.supported, prefill: (m) => m.audio.default },
	firstImage: { supported: (m) => m.firstImage, prefill: () => '' },
	lastImage: { supported: (m) => m.lastImage, prefill: () => '' },
	referenceImages: { supported: (m) => m.references.images > 0, prefill: () => '' },
	referenceVideos: { supported: (m) => m.references.videos > 0, prefill: () => '' },
	referenceAudios: { supported: (m) => m.references.audios > 0, prefill: () => '' },
};

const isPrimitive = (value: unknown) => typeof value !== 'object' && typeof value !== 'function';

/** A typed value that reads the same as the pre-fill ("5" and 5, "true" and true) is the pre-fill. */
function readsAs(value: unknown, prefill: unknown): boolean {
	return value === prefill || (isPrimitive(value) && isPrimitive(prefill) && String(value) === String(prefill));
}

/** Nothing there: absent, null, blank text, an empty list. */
function blank(value: unknown): boolean {
	return (
		value === undefined ||
		value === null ||
		(typeof value === 'string' && value.trim() === '') ||
		(Array.isArray(value) && value.length === 0)
	);
}

/**
 * How the values reached the node. `expressions`: every field is an expression, so whatever it gives (not blank) is
 * the user's. Otherwise the values are typed: a value that reads as what n8n pre-fills is not the user's; with a fixed
 * model n8n pre-fills that model's variant of each field, with the model from an expression some variant's.
 */
export interface Source {
	expressions?: boolean;
	modelFixed?: boolean;
}

/** The value the user chose, or undefined when the field holds only what n8n put there. */
function chosen(field: Exclude<Field, 'prompt'>, m: VideoModelCapabilities, value: unknown, source: Source): unknown {
	if (blank(value)) return undefined;
	if (source.expressions) return value;
	const rule = RULES[field];
	const prefills =
		source.modelFixed !== false && rule.supported(m)
			? [rule.prefill(m)]
			: VIDEO_MODELS.filter((other) => rule.supported(other)).map((other) => rule.prefill(other));
	return prefills.some((prefill) => readsAs(value, prefill)) ? undefined : value;
}

/** An integer, or text that is one (digits with an optional minus, spaces around allowed); else undefined. */
function wholeNumber(value: unknown): bigint | undefined {
	if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : undefined;
	if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return BigInt(value.trim());
	return undefined;
}

/**
 * An HTTP(S) link the service can fetch: written out as http:// or https:// followed by a host, nothing a URL parser
 * would rewrite (white space, backslashes), no user name or password.
 */
function link(value: unknown): string | undefined {
	if (typeof value !== 'string') return undefined;
	const text = value.trim();
	if (text.length > MAX_URL_CHARS || /[\s\\]/.test(text) || !/^https?:\/\//i.test(text)) return undefined;
	try {
		const url = new URL(text);
		const fetchable = (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '';
		return fetchable && url.username === '' && url.password === '' ? text : undefined;
	} catch {
		return undefined;
	}
}

/** Entries of a text: white space and new lines separate, a comma only before another http(s)://. */
function entriesOf(value: unknown): unknown[] {
	if (Array.isArray(value)) return value;
	if (typeof value !== 'string') return [value];
	const parts: string[] = [];
	let current = '';
	for (let i = 0; i < value.length; i++) {
		const char = value[i];
		const urlFollows = char === ',' && /^\s*https?:\/\//i.test(value.slice(i + 1));
		if (/\s/.test(char) || urlFollows) {
			parts.push(current);
			current = '';
		} else {
			current += char;
		}
	}
	parts.push(current);
	return parts.map((part) => part.replace(/^,+/, '').replace(/,+$/, '')).filter((part) => part !== '');
}

/** A list of links from an array or from text. */
function links(value: unknown): string[] | undefined {
	const urls = entriesOf(value).map(link);
	return urls.every((url) => url !== undefined) ? (urls as string[]) : undefined;
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function judge(modelValue: unknown, raw: RawParameters, source: Source = {}): Verdict {
	const model =
		typeof modelValue === 'string' ? VIDEO_MODELS.find((candidate) => candidate.id === modelValue.trim()) : undefined;
	if (!model) return { valid: false, fields: ['model'] };

	const bad: string[] = [];
	const body: Record<string, unknown> = { model: model.id };
	const value = (field: Exclude<Field, 'prompt'>) => chosen(field, model, raw[field], source);
	const refuse = (field: Field) => bad.push(field);

	if (typeof raw.prompt === 'string' && raw.prompt.trim() !== '') body.prompt = raw.prompt;
	else refuse('prompt');

	const duration = value('duration');
	if (duration === undefined) {
		// Not set by the user: a required duration takes the model's default from the matrix, else none is sent.
		if (model.duration.required) body.duration = model.duration.default;
	} else {
		const seconds = wholeNumber(duration);
		if (seconds === undefined || seconds < model.duration.min || seconds > model.duration.max) refuse('duration');
		else body.duration = Number(seconds);
	}

	for (const [field, key, allowed] of [
		['aspectRatio', 'aspect_ratio', model.aspectRatios],
		['resolution', 'resolution', model.resolutions],
	] as const) {
		const choice = value(field);
		if (choice === undefined) continue;
		if (typeof choice === 'string' && allowed.includes(choice)) body[key] = choice;
		else refuse(field);
	}

	const seed = value('seed');
	if (seed !== undefined) {
		const integer = wholeNumber(seed);
		// Beyond 2^53 - 1 a JSON number is no longer exact: refused, never rounded.
		if (!model.seed || integer === undefined || integer < -SAFE || integer > SAFE) refuse('seed');
		else body.seed = Number(integer);
	}

	const audio = value('generateAudio');
	if (audio !== undefined) {
		if (!model.audio.supported) refuse('generateAudio');
		else if (audio === true || audio === 'true') body.generate_audio = true;
		else if (audio === false || audio === 'false') body.generate_audio = false;
		else refuse('generateAudio');
	}

	for (const [field, key, supported] of [
		['firstImage', 'first_image', model.firstImage],
		['lastImage', 'last_image', model.lastImage],
	] as const) {
		const frame = value(field);
		if (frame === undefined) continue;
		const entries = entriesOf(frame);
		const single = entries.length === 1 ? link(entries[0]) : undefined;
		if (!supported || single === undefined) refuse(field);
		else body[key] = single;
	}

	for (const [field, key, limit] of [
		['referenceImages', 'reference_images', model.references.images],
		['referenceVideos', 'reference_videos', model.references.videos],
		['referenceAudios', 'reference_audios', model.references.audios],
	] as const) {
		const list = value(field);
		if (list === undefined) continue;
		const urls = links(list);
		if (limit === 0 || urls === undefined || urls.length > limit) refuse(field);
		else if (urls.length > 0) body[key] = urls;
	}

	return bad.length > 0 ? { valid: false, fields: bad } : { valid: true, body };
}

/** JSON with sorted keys: bodies compare equal whatever order their fields were added in. */
export function canonical(value: unknown): string {
	return JSON.stringify(value, (_key, inner: unknown) =>
		inner && typeof inner === 'object' && !Array.isArray(inner)
			? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
			: inner,
	);
}
