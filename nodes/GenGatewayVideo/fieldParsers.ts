import type { VideoModelCapabilities } from './matrix';

/**
 * Parsers of the Generate fields: a value as n8n gives it (typed, or whatever an expression produced) → the value the
 * request body carries, or an InvalidVideoRequest naming the field, the model and what is allowed. Pure.
 */

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

export function describeValue(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return `an array of ${value.length}`;
	if (typeof value === 'object') return 'an object';
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	const text = String(value);
	return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/** Nothing there: absent, null, blank text, an empty list. */
export function isEmpty(value: unknown): boolean {
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

export function parseSingleUrl(field: string, model: VideoModelCapabilities, value: unknown): string {
	if (Array.isArray(value)) {
		if (value.length !== 1) {
			throw new InvalidVideoRequest(field, model.id, `takes exactly one URL, got ${value.length}`);
		}
		return checkUrl(field, model.id, value[0]);
	}
	return checkUrl(field, model.id, value);
}

function parseInteger(value: unknown): number | undefined {
	if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
	if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) {
		const parsed = Number(value.trim());
		return Number.isSafeInteger(parsed) ? parsed : undefined;
	}
	return undefined;
}

export function parseDuration(field: string, model: VideoModelCapabilities, value: unknown): number {
	const rule = model.duration;
	const seconds = parseInteger(value);
	if (seconds === undefined || seconds < rule.min || seconds > rule.max) {
		throw new InvalidVideoRequest(
			field,
			model.id,
			`${describeValue(value)} is not allowed; allowed: ${rule.min}–${rule.max} seconds, a whole number`,
		);
	}
	return seconds;
}

export function parseChoice(field: string, model: VideoModelCapabilities, value: unknown, allowed: readonly string[]): string {
	if (typeof value !== 'string' || !allowed.includes(value)) {
		throw new InvalidVideoRequest(field, model.id, `${describeValue(value)} is not allowed; allowed: ${allowed.join(', ')}`);
	}
	return value;
}

export function parseSeed(field: string, model: VideoModelCapabilities, value: unknown): number | string {
	const integer = parseInteger(value);
	if (integer !== undefined) return integer;
	// An integer too large for a JS number still is an integer: pass the digits on untouched.
	if (typeof value === 'string' && /^\s*-?\d{1,64}\s*$/.test(value)) return value.trim();
	throw new InvalidVideoRequest(field, model.id, `${describeValue(value)} is not an integer`);
}

export function parseBoolean(field: string, model: VideoModelCapabilities, value: unknown): boolean {
	if (typeof value === 'boolean') return value;
	if (value === 'true' || value === 'false') return value === 'true';
	throw new InvalidVideoRequest(field, model.id, `${describeValue(value)} is not true or false`);
}

/** A reference list within the model's limit; undefined when it holds no URL at all (then nothing is sent). */
export function parseReferences(
	field: string,
	model: VideoModelCapabilities,
	value: unknown,
	limit: number,
	what: string,
): string[] | undefined {
	const urls = parseUrlList(field, model.id, value);
	if (urls.length > limit) {
		throw new InvalidVideoRequest(field, model.id, `${urls.length} ${what} given; allowed: at most ${limit}`);
	}
	return urls.length > 0 ? urls : undefined;
}
