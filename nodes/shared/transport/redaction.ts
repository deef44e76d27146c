import { redact } from './errors';

/**
 * The key never travels further than the transport: every string of a service's JSON answer (values and keys, at any
 * depth) goes through `redact` before a node sees it, so a `fail_reason`, a status, a `task_id`, an artifact key or a
 * `revised_prompt` that echoes the key cannot carry it into an output, an error, its context or a log line.
 */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
	if (typeof value === 'string') return redact(value, secrets) as T;
	if (Array.isArray(value)) return value.map((entry: unknown) => redactDeep(entry, secrets)) as T;
	if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
		const out: Record<string, unknown> = {};
		for (const [key, entry] of Object.entries(value)) out[redact(key, secrets)] = redactDeep(entry, secrets);
		return out as T;
	}
	return value;
}

/** Shorter than this, a "key" is not searched for: masking every "abc" in an answer would hide nothing and break text. */
const MIN_SECRET_LENGTH = 4;

/**
 * The texts to mask for a credential's key: the key as stored (a pasted key may end in a space or a tab), the key as
 * servers see it (they trim the header value, so that is what they echo), and the trimmed key percent-encoded (a path
 * or a query string echoing it). Longest first, so a longer variant is masked whole before a shorter one inside it.
 */
export function secretVariants(key: string): string[] {
	const trimmed = key.trim();
	const variants = new Set([key, trimmed, encodeURIComponent(trimmed)]);
	return [...variants].filter((variant) => variant.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/**
 * A response header's value as it may appear in a message or a log line: on one line, at most `max` characters, the key
 * masked (masked before it is cut, so a cut key cannot escape).
 */
export function headerText(value: unknown, secrets: readonly string[], max = 200): string {
	const raw = Array.isArray(value) ? value.join(', ') : value === undefined || value === null ? '' : String(value);
	return redact(raw.replace(/\s+/g, ' ').trim(), secrets).slice(0, max);
}

/**
 * A Content-Type header as a MIME type to store a file under (the binary's metadata, the output's `mime_type`, its file
 * name's extension): `type/subtype` in lower case, or undefined when the header is no MIME type or holds the key (a
 * masked type would be no type at all).
 */
export function headerMimeType(value: unknown, secrets: readonly string[]): string | undefined {
	if (typeof value !== 'string') return undefined;
	const type = value.split(';')[0].trim().toLowerCase();
	if (!/^[a-z0-9][\w.+-]{0,63}\/[a-z0-9][\w.+-]{0,99}$/.test(type)) return undefined;
	return redact(type, secrets) === type ? type : undefined;
}

/**
 * Masks the key in text that arrives in pieces (a stream's deltas handed on as they come): a piece is handed on at once,
 * except for a tail that could be the beginning of the key, which waits for the next piece (at most the key's length,
 * and only while it still matches the key). `flush` hands on what is held at the end.
 */
export class StreamRedactor {
	private held = '';

	private readonly lowerSecrets: string[];

	constructor(private readonly secrets: readonly string[]) {
		this.lowerSecrets = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH).map((secret) => secret.toLowerCase());
	}

	/** The text that can be handed on now. */
	push(piece: string): string {
		const text = redact(this.held + piece, this.secrets);
		const keep = this.heldBack(text);
		this.held = text.slice(text.length - keep);
		return text.slice(0, text.length - keep);
	}

	/** What is still held (the end of the text: it can no longer become the key). */
	flush(): string {
		const rest = redact(this.held, this.secrets);
		this.held = '';
		return rest;
	}

	/** The length of the longest end of `text` that begins a key (in any letter case). */
	private heldBack(text: string): number {
		const lower = text.toLowerCase();
		let longest = 0;
		for (const secret of this.lowerSecrets) {
			for (let length = Math.min(lower.length, secret.length - 1); length > longest; length--) {
				if (secret.startsWith(lower.slice(lower.length - length))) {
					longest = length;
					break;
				}
			}
		}
		return longest;
	}
}
