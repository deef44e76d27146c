import { decodeDataUrl } from '../shared/binary/binary';
import { httpUrlProblem, quoteBounded, splitUrlText } from '../shared/input/urls';
import { imageTypeOf, MAX_IMAGE_BYTES, MAX_IMAGE_MB, megabytes, SNIFF_BYTES } from '../shared/binary/imageBytes';

/**
 * The "Image URL(s)" field → the URLs sent, each checked as Video checks its reference URLs: an HTTP(S) URL the
 * service can fetch, or a `data:` URL whose bytes are an image of at most 20 MB. Anything else (`file://`,
 * `javascript:`, a local path, a URL with a user name or password) is refused before anything is sent. Pure.
 */

/** What the field takes, for the error's description. */
export const IMAGE_URLS_ALLOWED =
	'Each image is an http:// or https:// URL the service can fetch (without a user name or password), or a data: URL ' +
	`of an image (data:image/png;base64,…) of at most ${MAX_IMAGE_MB} MB. Give one URL per line, or a list from an ` +
	'expression; a comma separates URLs only before the next http(s):// or data:, so commas inside a URL stay. For a ' +
	'local file, read it into a binary field and set "Images" to From Binary Field(s). Nothing was sent.';

/**
 * The entries of the field: a list (from an expression) entry by entry; text split on new lines and white space, and
 * on a comma before another `http(s)://` or `data:` (the comma-separated lists of saved workflows keep working,
 * while a CDN URL such as `…/w_200,h_100/a.png` stays whole).
 */
export function imageUrlEntries(value: unknown): unknown[] {
	if (value === undefined || value === null) return [];
	if (Array.isArray(value)) return value.filter((entry) => !(typeof entry === 'string' && entry.trim() === ''));
	if (typeof value === 'string') return splitUrlText(value, ['https?://', 'data:']);
	return [value];
}

/** Why a `data:` URL is not an image to send, or undefined. `text` starts with `data:`. */
function dataUrlProblem(text: string): string | undefined {
	const header = /^data:([^,]*),/i.exec(text.slice(0, 256));
	if (!header) return 'is not a complete data: URL (data:image/png;base64,<the bytes>)';
	const params = header[1].split(';').map((part) => part.trim().toLowerCase());
	if (!params[0].startsWith('image/')) {
		return `is a data: URL of ${params[0] ? `type ${params[0]}` : 'no type'}, not of an image type (image/…)`;
	}
	// Base64 is 4 characters for 3 bytes: a URL over the limit is refused before it is decoded.
	const payload = text.slice(header[0].length).replace(/=+$/, '');
	const estimate = params.includes('base64') ? Math.floor((payload.length * 3) / 4) : payload.length;
	const tooBig = (size: number) =>
		`holds ${megabytes(size)} (${size} bytes); an image may be at most ${MAX_IMAGE_MB} MB`;
	if (estimate > MAX_IMAGE_BYTES && !payload.includes('%')) return tooBig(estimate);
	let decoded: ReturnType<typeof decodeDataUrl>;
	try {
		decoded = decodeDataUrl(text);
	} catch {
		decoded = undefined;
	}
	if (!decoded) return 'is not a readable data: URL (its bytes could not be decoded)';
	if (decoded.bytes.length > MAX_IMAGE_BYTES) return tooBig(decoded.bytes.length);
	const type = imageTypeOf(decoded.bytes.subarray(0, SNIFF_BYTES), params[0], decoded.bytes.length);
	if ('notAnImage' in type) return `is labelled ${params[0]}, but its bytes are ${type.notAnImage}`;
	return undefined;
}

/** One entry → the URL sent (trimmed), or why it is refused, with the entry quoted (redacted, bounded). */
export function checkImageUrl(entry: unknown): { url: string } | { refused: string } {
	if (typeof entry !== 'string') {
		const given = entry === null ? 'null' : typeof entry === 'object' ? 'an object' : String(entry);
		return { refused: `${given} is not a URL (text)` };
	}
	const text = entry.trim();
	const problem = /^data:/i.test(text) ? dataUrlProblem(text) : httpUrlProblem(text);
	return problem === undefined ? { url: text } : { refused: `${quoteBounded(text)} ${problem}` };
}
