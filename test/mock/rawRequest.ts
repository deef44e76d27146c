/**
 * A plain node:http request for tests that need to see exactly what the wire did: status, headers, body bytes,
 * or the socket error (ECONNRESET, socket hang up) when the mock cuts the connection.
 */
import { request } from 'http';

export interface RawResponse {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: Buffer;
	/** Set when the connection broke; `body` then holds what arrived before the break. */
	error?: string;
}

export function rawRequest(
	url: string,
	opts: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<RawResponse> {
	return new Promise((resolve) => {
		const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
		const chunks: Buffer[] = [];
		let status = 0;
		let headers: RawResponse['headers'] = {};
		let settled = false;
		const finish = (error?: string) => {
			if (settled) return;
			settled = true;
			resolve({ status, headers, body: Buffer.concat(chunks), ...(error ? { error } : {}) });
		};
		const req = request(
			url,
			{
				method: opts.method ?? (payload ? 'POST' : 'GET'),
				headers: {
					...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}),
					...opts.headers,
				},
				agent: false,
			},
			(res) => {
				status = res.statusCode ?? 0;
				headers = res.headers;
				res.on('data', (c: Buffer) => chunks.push(c));
				res.on('end', () => finish());
				res.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
				res.on('close', () => finish(res.complete ? undefined : 'aborted'));
			},
		);
		req.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
		if (opts.timeoutMs) req.setTimeout(opts.timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
		req.end(payload);
	});
}
