/**
 * A failed TLS handshake proves nothing was sent: Chat, Image (paid POSTs) and Models (a read) say "TLS / certificate
 * problem", are not reported as an unknown outcome, and are not retried. Servers of the test's own: an HTTPS server
 * with a self-signed certificate (made with openssl for this run), and a plain-HTTP server reached with https://.
 */
import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { createServer as createHttpServer } from 'http';
import type { Server } from 'http';
import { createServer as createHttpsServer } from 'https';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';

const API_KEY = 'sentinel-key-tls-77aa21';

let cert: { key: Buffer; cert: Buffer };
beforeAll(() => {
	const dir = mkdtempSync(join(tmpdir(), 'gg-tls-'));
	try {
		execFileSync('openssl', [
			'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
			'-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
			'-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
		], { stdio: 'ignore' });
		cert = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

interface Counted {
	url: string;
	/** TCP connections accepted. */
	connections: () => number;
	/** HTTP requests that reached the handler (a paid request would be one of these). */
	requests: () => number;
}

async function withServer(server: Server, scheme: 'http' | 'https', test: (s: Counted) => Promise<void>): Promise<void> {
	let connections = 0;
	let requests = 0;
	server.on('connection', () => connections++);
	server.on('request', (_req, res) => {
		requests++;
		res.writeHead(200, { 'Content-Type': 'application/json' });
		res.end('{}');
	});
	server.on('tlsClientError', () => undefined);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		const { port } = server.address() as AddressInfo;
		await test({ url: `${scheme}://127.0.0.1:${port}`, connections: () => connections, requests: () => requests });
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}

const selfSigned = async (test: (s: Counted) => Promise<void>) =>
	await withServer(createHttpsServer({ key: cert.key, cert: cert.cert }), 'https', test);
/** https:// aimed at a plain-HTTP server: the server reads a ClientHello, the client a plain-text answer. */
const plainHttpAsHttps = async (test: (s: Counted) => Promise<void>) =>
	await withServer(createHttpServer(), 'https', test);

const model = (value: string) => ({ __rl: true, mode: 'id', value });

const NODES: Record<string, { type: string; parameters: IDataObject; method: string; path: string }> = {
	chat: {
		type: 'genGatewayChat',
		parameters: { operation: 'message', model: model('m'), messages: { values: [{ role: 'user', content: 'hi' }] } },
		method: 'POST',
		path: '/v1/chat/completions',
	},
	image: {
		type: 'genGatewayImage',
		parameters: { operation: 'generate', model: model('img-1'), prompt: 'a fox', size: '256x256' },
		method: 'POST',
		path: '/v1/images/generations',
	},
	models: { type: 'genGatewayModels', parameters: { operation: 'getMany' }, method: 'GET', path: '/v1/models' },
};

async function run(node: keyof typeof NODES, baseUrl: string): Promise<RunResult> {
	const { type, parameters } = NODES[node];
	return await runWorkflow({
		nodes: [{ name: 'Node', type, parameters, credentials: true }],
		credentials: { baseUrl, apiKey: API_KEY },
	});
}

describe.each([
	['a self-signed certificate', selfSigned],
	['https:// aimed at a plain-HTTP server', plainHttpAsHttps],
] as const)('%s', (_name, serve) => {
	it.each(['chat', 'image', 'models'] as const)('%s: "TLS / certificate problem", nothing sent, not retried', async (node) => {
		await serve(async (server) => {
			const result = await run(node, server.url);
			const error = result.nodeError('Node') as (Error & { description?: string; context?: IDataObject }) | undefined;
			expect(error).toBeDefined();
			const { method, path } = NODES[node];
			expect(error!.message).toMatch(
				new RegExp(`^${method} ${path} failed: could not reach the service: TLS / certificate problem \\([A-Z_]+\\), check the URL scheme and certificate`),
			);
			expect(error!.message).not.toMatch(/outcome|may have accepted/i);
			expect(error!.description).toMatch(/nothing was sent/i);
			expect(error!.context?.outcomeUnknown).toBe(false);
			// One handshake, no request: not retried (reads used to try 6 times), and nothing for the service to charge.
			expect(server.connections()).toBe(1);
			expect(server.requests()).toBe(0);
		});
	});
});
