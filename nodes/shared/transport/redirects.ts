import type { IN8nHttpFullResponse } from 'n8n-workflow';

/**
 * How a read follows redirects: here, hop by hop, never by the HTTP library. The redirect library under n8n's helper
 * keeps the Authorization header on a hop to a sub-domain and from http to https, and n8n's own redirect hook only ever
 * adds it back; so every request of the package is sent with redirects off, and a read's 3xx comes here.
 *
 * The rule (docs/reliability.md, "The key stays with its origin"): the key goes to the base URL's origin only (scheme,
 * host and port). A hop that stays on that origin is followed with the key; a hop to any other origin (a sub-domain,
 * another port, http <-> https) is followed without it, and so is every hop after it, wherever it leads. A paid POST
 * never follows a redirect at all (transport.ts).
 */

/** Redirects a read follows at most (the content's redirect to a temporary file URL is one). */
export const MAX_READ_REDIRECTS = 5;

/** The statuses that redirect; 300 and 304 do not send the client anywhere. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** One hop of a chain: where it goes, and whether the key may go with it. */
export interface RedirectHop {
	url: string;
	withKey: boolean;
	/** 303 (and 301/302 for anything but GET or HEAD, as browsers do) asks again with GET and without the body. */
	method: string;
	keepsBody: boolean;
}

/** A redirect that leads nowhere usable; its code is the one the transport's rule knows (retry.ts failureVerdict). */
export interface RedirectFailure {
	failure: 'ERR_FR_TOO_MANY_REDIRECTS' | 'ERR_FR_REDIRECTION_FAILURE';
	reason: string;
}

const unusable = (reason: string): RedirectFailure => ({ failure: 'ERR_FR_REDIRECTION_FAILURE', reason });

function locationOf(response: IN8nHttpFullResponse): string | undefined {
	const raw = (response.headers as Record<string, unknown> | undefined)?.location;
	const value = Array.isArray(raw) ? raw[0] : raw;
	return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The origin a URL belongs to, or undefined when it cannot be read. */
function originOf(url: string): string | undefined {
	try {
		return new URL(url).origin;
	} catch {
		return undefined;
	}
}

/**
 * The next hop of a chain, or undefined when the answer is not a redirect to follow (not a redirect status, or no
 * Location: handed on as the answer). `keyHolds`: the chain has not left the base URL's origin yet.
 */
export function nextHop(
	response: IN8nHttpFullResponse,
	current: string,
	method: string,
	baseOrigin: string | undefined,
	keyHolds: boolean,
): RedirectHop | RedirectFailure | undefined {
	if (!REDIRECT_STATUSES.has(response.statusCode)) return undefined;
	const location = locationOf(response);
	if (location === undefined) return undefined;
	let target: URL;
	try {
		target = new URL(location, current);
	} catch {
		return unusable('the redirect leads to an address that cannot be read');
	}
	if (target.protocol !== 'http:' && target.protocol !== 'https:') {
		return unusable(`the redirect leads to a ${target.protocol} address`);
	}
	// The fragment is the client's, never sent; user info in a Location would replace the key with other credentials.
	target.hash = '';
	target.username = '';
	target.password = '';
	const upper = method.toUpperCase();
	const asGet = !['GET', 'HEAD'].includes(upper) && [301, 302, 303].includes(response.statusCode);
	return {
		url: target.href,
		withKey: keyHolds && baseOrigin !== undefined && target.origin === baseOrigin,
		method: asGet ? 'GET' : upper,
		keepsBody: !asGet,
	};
}

/** What a followed chain ended on: the last answer, and the first other origin it went to (for an error's note). */
export type Followed = IN8nHttpFullResponse & { foreignOrigin?: string };

/**
 * Follows a read's chain from its first answer. `send` makes one hop (with or without the key, as told); `discard`
 * drops a redirect's own body (a stream's socket). At most MAX_READ_REDIRECTS hops; a chain that leads nowhere usable
 * ends in a RedirectFailure, which the transport raises as a failed request with its code.
 */
export async function followRead(
	first: IN8nHttpFullResponse,
	start: { url: string; method: string; baseUrl: string; keyed: boolean },
	send: (hop: RedirectHop) => Promise<IN8nHttpFullResponse>,
	discard: (response: IN8nHttpFullResponse) => void,
): Promise<Followed | RedirectFailure> {
	const baseOrigin = originOf(start.baseUrl);
	let response: Followed = first;
	let current = start.url;
	let method = start.method;
	let keepsBody = true;
	// A chain that began without the key (a file host's) never gets it, wherever it leads.
	let keyHolds = start.keyed && originOf(start.url) === baseOrigin;
	let foreignOrigin: string | undefined;
	for (let hops = 0; ; hops++) {
		const hop = nextHop(response, current, method, baseOrigin, keyHolds);
		if (!hop) return foreignOrigin === undefined ? response : { ...response, foreignOrigin };
		discard(response);
		if ('failure' in hop) return hop;
		if (hops >= MAX_READ_REDIRECTS) {
			return { failure: 'ERR_FR_TOO_MANY_REDIRECTS', reason: `more than ${MAX_READ_REDIRECTS} redirects in a row` };
		}
		if (!hop.withKey) {
			keyHolds = false;
			foreignOrigin ??= new URL(hop.url).origin;
		}
		method = hop.method;
		keepsBody &&= hop.keepsBody;
		current = hop.url;
		response = await send({ ...hop, keepsBody });
	}
}
