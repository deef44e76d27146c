/**
 * URLs the user gives for the service to fetch (Chat's image URLs; the same rules as Video's reference URLs in
 * nodes/GenGatewayVideo/model/fieldParsers.ts): how a text holding several is split, what one must look like, and how
 * one is quoted in an error. Pure.
 */

const MAX_URL_LENGTH = 4096;

/** A user name or password inside a URL (`//user:pass@host`) never reaches a message. */
const redactUserInfo = (text: string) => text.replace(/\/\/[^/?#\s@]*@/g, '//***@');

/** `text` quoted for an error: user info redacted, at most `max` characters, then its full length. */
export function quoteBounded(text: string, max = 60): string {
	const redacted = redactUserInfo(text);
	if (redacted.length <= max) return JSON.stringify(redacted);
	return `${JSON.stringify(`${redacted.slice(0, max - 3)}...`)} (${text.length} characters)`;
}

/**
 * Text holding URLs: split on white space and new lines, and on a comma only where another URL of a scheme in
 * `schemes` follows, so that URLs with commas (common on image CDNs: `…/w_200,h_100/a.png`) stay whole. Commas
 * around an entry are dropped.
 */
export function splitUrlText(text: string, schemes: readonly string[] = ['https?://']): string[] {
	const nextUrl = new RegExp(`\\s+|,(?=\\s*(?:${schemes.join('|')}))`, 'i');
	return text
		.split(nextUrl)
		.map((part) => part.replace(/^,+|,+$/g, ''))
		.filter((part) => part !== '');
}

/**
 * Why `text` is not one URL the service can fetch, or undefined when it is. Checked with the WHATWG URL parser (the
 * one browsers use): written out as `http://` or `https://` (so `https:host` and `http:/x`, which the parser would
 * quietly repair, are refused), with a host, without white space or backslashes inside (the parser would rewrite
 * them), and without a user name or password (it would be sent on and echoed in the node's output).
 */
export function httpUrlProblem(text: string): string | undefined {
	if (text.length > MAX_URL_LENGTH) return `is longer than ${MAX_URL_LENGTH} characters`;
	if (/\s/.test(text)) return 'contains white space (spaces inside a URL are written %20)';
	if (text.includes('\\')) return 'contains a backslash; URLs use forward slashes';
	let url: URL | undefined;
	try {
		url = new URL(text);
	} catch {
		url = undefined;
	}
	if (!url || !/^https?:\/\//i.test(text) || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
		return 'is not an HTTP(S) URL (it must start with http:// or https:// and name a host)';
	}
	if (url.username || url.password) {
		return 'contains a user name or password; these are not sent (the URL would carry them to the service)';
	}
	return undefined;
}
