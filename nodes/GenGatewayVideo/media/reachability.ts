/**
 * Whether the service can fetch a URL n8n signs: n8n builds it from its own public URL, which on a default install is
 * http://localhost:5678. A service on a public host cannot reach a loopback or private address, and the task would
 * be paid for and fail (or the service would fetch nothing), so such a URL is refused before anything is sent. A
 * service on a loopback or private host is handed such a URL with a warning: it may reach it, the provider behind it
 * may not. Pure.
 */

type HostKind = 'loopback' | 'private' | 'public';

function ipv4Kind(host: string): HostKind | undefined {
	const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
	if (!match) return undefined;
	const [a, b] = [Number(match[1]), Number(match[2])];
	if (a === 127) return 'loopback';
	// 0/8 (this network), 10/8, 172.16/12, 192.168/16, 169.254/16 (link-local), 100.64/10 (carrier-grade NAT).
	if (a === 0 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
	if ((a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127)) return 'private';
	return 'public';
}

function ipv6Kind(host: string): HostKind | undefined {
	if (!host.includes(':')) return undefined;
	const address = host.toLowerCase();
	if (address === '::1') return 'loopback';
	if (address === '::') return 'private';
	// An IPv4 address mapped into IPv6 (::ffff:127.0.0.1, or as the URL parser writes it, ::ffff:7f00:1).
	const mapped = /^::ffff:(.+)$/.exec(address);
	if (mapped) {
		const dotted = ipv4Kind(mapped[1]);
		if (dotted) return dotted;
		const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(mapped[1]);
		if (hex) {
			const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
			return ipv4Kind(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
		}
	}
	const first = parseInt(address.split(':')[0] || '0', 16);
	// fc00::/7 (unique local), fe80::/10 (link-local).
	if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80) return 'private';
	return 'public';
}

/** Names only a local network resolves: one label (`n8n`, a Docker service), `.local`, `.internal`, `.lan`, … */
const LOCAL_SUFFIXES = ['.local', '.internal', '.lan', '.home.arpa', '.localdomain', '.intranet', '.corp', '.home'];

/** Where a host name or address (as in a URL, IPv6 in brackets or not) can be reached from. */
export function hostKind(hostname: string): HostKind {
	const host = hostname.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
	const ip = ipv4Kind(host) ?? ipv6Kind(host);
	if (ip) return ip;
	if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
	if (!host.includes('.') || LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) return 'private';
	return 'public';
}

/** The scheme, host and port of a URL: never its path or query (a signed URL's token is a secret). */
export function originOf(url: string): string {
	try {
		return new URL(url).origin;
	} catch {
		return '(not a URL)';
	}
}

/** The service's and n8n's URLs with where each can be reached from, or undefined when either is no URL. */
function addressPair(serviceBaseUrl: string, signedUrl: string) {
	try {
		const [service, signed] = [new URL(serviceBaseUrl), new URL(signedUrl)];
		return { service, signed, serviceKind: hostKind(service.hostname), signedKind: hostKind(signed.hostname) };
	} catch {
		return undefined;
	}
}

/**
 * Why the service at `serviceBaseUrl` cannot fetch `signedUrl`, or undefined when it can (as far as the addresses
 * tell): only a service on a public host is refused a loopback or private n8n address. A service on this machine or
 * network may well reach it (the local mock does), so nothing is refused then.
 */
export function unreachableProblem(serviceBaseUrl: string, signedUrl: string): string | undefined {
	const pair = addressPair(serviceBaseUrl, signedUrl);
	if (!pair) return undefined;
	const { service, signed, serviceKind, signedKind } = pair;
	if (serviceKind !== 'public' || signedKind === 'public') return undefined;
	return (
		`n8n would serve it at ${signed.origin} (a ${signedKind} address), which the service at ${service.origin} (a ` +
		`public host) cannot reach`
	);
}

/**
 * The warning for a service on a loopback or private host handed a loopback or private n8n URL, or undefined. Nothing
 * is refused then: the local mock, or a gateway beside n8n that fetches the file itself, reaches it. But a gateway
 * that hands the URL on to a cloud provider (what new-api does with frame URLs) gets a task that is paid for and then
 * fails at the provider, which cannot reach that address. Names the origins only (the token is a secret of the URL)
 * and `variable`, the setting of n8n's public URL on the running line (publicUrl.ts).
 */
export function handOnWarning(serviceBaseUrl: string, signedUrl: string, variable: string): string | undefined {
	const pair = addressPair(serviceBaseUrl, signedUrl);
	if (!pair) return undefined;
	const { service, signed, serviceKind, signedKind } = pair;
	if (serviceKind === 'public' || signedKind === 'public') return undefined;
	return (
		`Binary data goes to the service as n8n URLs at ${signed.origin} (a ${signedKind} address), and the service at ` +
		`${service.origin} is on a ${serviceKind} host: it can fetch them if it runs beside n8n, but a gateway that ` +
		'hands them on to a cloud provider (as new-api does) has the provider fetch them, which cannot reach that ' +
		`address, and the paid task fails there. If yours does, set ${variable} to n8n's public URL and restart n8n.`
	);
}
