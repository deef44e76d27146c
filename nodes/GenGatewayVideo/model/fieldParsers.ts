import { httpUrlProblem, splitUrlText } from '../../shared/input/urls';
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

/** A user name or password inside a URL (`//user:pass@host`) never reaches a message. */
function redactUserInfo(text: string): string {
	return text.replace(/\/\/[^/?#\s@]*@/g, '//***@');
}

export function describeValue(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return `an array of ${value.length}`;
	if (typeof value === 'object') return 'an object';
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	const text = redactUserInfo(String(value));
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

/**
 * Video's words for the shared URL checks where they say more than Chat's (one URL per entry, no local files, not
 * into the output): Video's users saw these before the checks were shared. Keyed by how the shared problem begins.
 */
const VIDEO_WORDS: ReadonlyArray<readonly [string, (problem: string) => string]> = [
	['contains white space', () => 'contains white space; give one URL per entry (spaces inside a URL are written %20)'],
	[
		'is not an HTTP(S) URL',
		(problem) => `${problem}; file:// URLs and local paths are not allowed (the service must be able to fetch it)`,
	],
	[
		'contains a user name or password',
		() =>
			'contains a user name or password; these are not sent (the URL would carry them to the service and into the ' +
			'output)',
	],
];

const inVideoWords = (problem: string) =>
	VIDEO_WORDS.find(([start]) => problem.startsWith(start))?.[1](problem) ?? problem;

/** One URL the service can fetch, by the shared rules (nodes/shared/input/urls.ts `httpUrlProblem`). */
function checkUrl(field: string, model: string, value: unknown): string {
	if (typeof value !== 'string') {
		throw new InvalidVideoRequest(field, model, `each entry must be an HTTP(S) URL, got ${describeValue(value)}`);
	}
	const text = value.trim();
	const problem = httpUrlProblem(text);
	if (problem) throw new InvalidVideoRequest(field, model, `${describeValue(text)} ${inVideoWords(problem)}`);
	return text;
}

/**
 * A URL list from an array (an expression) or from text: split on white space and new lines, and on a comma only
 * where another `http(s)://` follows (shared `splitUrlText`), so that URLs with commas stay whole.
 */
export function parseUrlList(field: string, model: string, value: unknown): string[] {
	if (isEmpty(value)) return [];
	const entries = Array.isArray(value) ? value : typeof value === 'string' ? splitUrlText(value) : [value];
	return entries.map((entry) => checkUrl(field, model, entry));
}

export function parseSingleUrl(field: string, model: VideoModelCapabilities, value: unknown): string {
	const entries = Array.isArray(value) ? value : typeof value === 'string' ? splitUrlText(value) : [value];
	if (entries.length !== 1) {
		throw new InvalidVideoRequest(field, model.id, `takes exactly one URL, got ${entries.length}`);
	}
	return checkUrl(field, model.id, entries[0]);
}

function parseInteger(value: unknown): number | undefined {
	if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
	if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) {
		const parsed = Number(value.trim());
		return Number.isSafeInteger(parsed) ? parsed : undefined;
	}
	return undefined;
}

const isIntegerText = (value: unknown) => typeof value === 'string' && /^\s*-?\d+\s*$/.test(value);

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

export function parseChoice(
	field: string,
	model: VideoModelCapabilities,
	value: unknown,
	allowed: readonly string[],
): string {
	if (typeof value !== 'string' || !allowed.includes(value)) {
		throw new InvalidVideoRequest(
			field,
			model.id,
			`${describeValue(value)} is not allowed; allowed: ${allowed.join(', ')}`,
		);
	}
	return value;
}

/**
 * An integer seed, sent as a JSON number. Beyond 2^53 − 1 a number is no longer exact (it is rounded, or written as
 * 1e+21), so such a seed is refused rather than changed.
 */
export function parseSeed(field: string, model: VideoModelCapabilities, value: unknown): number {
	const integer = parseInteger(value);
	if (integer !== undefined && Number.isSafeInteger(integer)) return integer;
	if ((typeof value === 'number' && Number.isInteger(value)) || isIntegerText(value)) {
		throw new InvalidVideoRequest(
			field,
			model.id,
			`${describeValue(value)} is too large: a seed can be at most ${Number.MAX_SAFE_INTEGER} (2^53 − 1) in size, the ` +
				`largest integer sent exactly`,
		);
	}
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

/**
 * The binary field names of a binary source: one for a frame, up to the model's limit for a reference list, separated
 * by commas (or a list from an expression); none at all means nothing to send.
 */
export function parseBinaryFieldNames(
	field: string,
	model: VideoModelCapabilities,
	value: unknown,
	limit: number,
	what: string,
): string[] {
	if (isEmpty(value)) return [];
	const entries = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value];
	const names = entries.map((entry) => {
		if (typeof entry !== 'string') {
			const got = describeValue(entry);
			throw new InvalidVideoRequest(field, model.id, `each entry must be a binary field name, got ${got}`);
		}
		return entry.trim();
	});
	const given = names.filter((name) => name !== '');
	if (given.length > limit) {
		const allowed = limit === 1 ? 'one binary field' : `at most ${limit}`;
		throw new InvalidVideoRequest(field, model.id, `${given.length} ${what} given; allowed: ${allowed}`);
	}
	return given;
}
