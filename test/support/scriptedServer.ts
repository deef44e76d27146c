import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server of a test's own: every request (method, path, body) is recorded, then `answer` decides what the
 * client gets, byte for byte, including a connection reset after the request was read (`res.socket.destroy()`).
 */
export interface ScriptedRequest {
	method: string;
	path: string;
	body: string;
	headers: http.IncomingHttpHeaders;
}

export type Answer = (req: ScriptedRequest, res: http.ServerResponse, index: number) => void | Promise<void>;

export interface ScriptedServer {
	url: string;
	requests: ScriptedRequest[];
	close(): Promise<void>;
}

export async function startScriptedServer(answer: Answer): Promise<ScriptedServer> {
	const requests: ScriptedRequest[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const recorded = {
				method: req.method ?? '',
				path: req.url ?? '',
				body: Buffer.concat(chunks).toString('utf8'),
				headers: req.headers,
			};
			requests.push(recorded);
			void Promise.resolve(answer(recorded, res, requests.length - 1)).catch(() => res.socket?.destroy());
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		close: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
	const text = JSON.stringify(body);
	res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
	res.end(text);
}

/** The request was read in full; the connection drops without an answer (the service may have accepted it). */
export function resetConnection(res: http.ServerResponse): void {
	res.socket?.destroy();
}

/** What a client posted to `path`, in order. */
export const postsTo = (server: ScriptedServer, path: string) =>
	server.requests.filter((r) => r.method === 'POST' && r.path.split('?')[0] === path);
