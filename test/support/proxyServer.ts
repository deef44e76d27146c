import { createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny loopback HTTP forward proxy for tests: takes absolute-URI requests (`GET http://host:port/path`), resolves the
 * host through its own table (so a made-up name like `mock.gen-gateway.test` works only through the proxy), forwards
 * request and answer as streams, and keeps a log. The log notes whether an Authorization header passed, never its value.
 */

export interface ProxyLogEntry {
	method: string;
	/** The absolute URI the client asked for. */
	url: string;
	/** An Authorization header was present and was forwarded (its value is not kept). */
	forwardedAuthorization: boolean;
	/** Status the upstream answered, 502 when it could not be reached. */
	status?: number;
}

export interface TestProxy {
	/** http://127.0.0.1:PORT */
	url: string;
	log: ProxyLogEntry[];
	close(): Promise<void>;
}

/** Hop-by-hop headers a proxy must not pass on (RFC 9110 7.6.1), plus the proxy's own. */
const HOP_BY_HOP = new Set([
	'connection',
	'keep-alive',
	'proxy-connection',
	'proxy-authorization',
	'proxy-authenticate',
	'te',
	'trailer',
	'transfer-encoding',
	'upgrade',
]);

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
	return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

/**
 * `hosts` maps a host name, or a `name:port` (asked first), to the `host:port` that serves it; other names are refused.
 */
export async function startTestProxy(hosts: Record<string, string>): Promise<TestProxy> {
	const log: ProxyLogEntry[] = [];
	const server = createServer((req, res) => {
		let target: URL | undefined;
		try {
			target = new URL(req.url ?? '');
		} catch {
			target = undefined;
		}
		const upstream = target && target.protocol === 'http:' ? (hosts[target.host] ?? hosts[target.hostname]) : undefined;
		const entry: ProxyLogEntry = {
			method: req.method ?? 'GET',
			url: req.url ?? '',
			forwardedAuthorization: false,
		};
		log.push(entry);
		if (!target || !upstream) {
			entry.status = 400;
			res.writeHead(400, { 'Content-Type': 'text/plain' }).end('test proxy: absolute http:// URI of a known host expected');
			return;
		}
		const [hostname, port] = upstream.split(':');
		entry.forwardedAuthorization = req.headers.authorization !== undefined;
		const outgoing = httpRequest(
			{ hostname, port: Number(port), method: req.method, path: `${target.pathname}${target.search}`, headers: forwardable(req.headers) },
			(answer) => {
				entry.status = answer.statusCode;
				res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
				answer.pipe(res);
				answer.on('error', () => res.destroy());
			},
		);
		outgoing.on('error', () => {
			entry.status = 502;
			if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' }).end('test proxy: upstream unreachable');
			else res.destroy();
		});
		req.pipe(outgoing);
		res.on('close', () => outgoing.destroy());
	});
	// CONNECT (HTTPS tunnels) is not needed here: refuse it plainly.
	server.on('connect', (req, socket) => {
		log.push({ method: 'CONNECT', url: req.url ?? '', forwardedAuthorization: false, status: 405 });
		socket.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		log,
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
