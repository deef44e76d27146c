/**
 * "Stop execution" while a request is in flight: the nodes re-throw through asNodeError (n8n's lint rule), which must
 * hand on what the aborted request failed with unchanged, so the engine records the run as cancelled (not failed) and
 * nothing is wrapped into a NodeOperationError. A loopback server of the test's own holds each request open.
 */
import { createServer } from 'http';
import type { IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';

import { runWorkflow } from '../harness/engine';
import type { HarnessNode } from '../harness/engine';

const API_KEY = 'sentinel-key-cancel-71d2';

let server: Server;
let baseUrl: string;
let arrived: (request: { path: string; streamed: boolean }) => void = () => undefined;
const open = new Set<ServerResponse>();

/** Answers nothing (or, for a streamed chat, the start of a stream), until the client goes away. */
function handle(req: IncomingMessage, res: ServerResponse) {
	let body = '';
	req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
	req.on('end', () => {
		open.add(res);
		res.on('close', () => open.delete(res));
		const streamed = body.includes('"stream":true');
		if (streamed) {
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.write('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}\n\n');
		}
		arrived({ path: req.url ?? '', streamed });
	});
}

beforeAll(async () => {
	server = createServer(handle);
	await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	for (const res of open) res.destroy();
	await new Promise<void>((done) => server.close(() => done()));
});

/** Runs one node and aborts the execution as soon as its request has reached the server. */
async function cancelInFlight(node: HarnessNode) {
	const controller = new AbortController();
	const reached = new Promise<{ path: string; streamed: boolean }>((resolve) => (arrived = resolve));
	const running = runWorkflow({ nodes: [node], credentials: { baseUrl, apiKey: API_KEY }, signal: controller.signal });
	const request = await reached;
	await new Promise((pause) => setTimeout(pause, 100));
	controller.abort();
	const result = await running;
	return { request, result };
}

const model = (value: string) => ({ __rl: true, mode: 'id', value });

it.each([
	[
		'Models (GET /v1/models)',
		{ name: 'Models', type: 'genGatewayModels', credentials: true, parameters: { returnAll: true } },
		{ path: '/v1/models', streamed: false },
	],
	[
		'Chat, a plain answer (POST /v1/chat/completions)',
		{
			name: 'Chat',
			type: 'genGatewayChat',
			credentials: true,
			parameters: { operation: 'message', model: model('gpt-4o-mini'), messages: { values: [{ role: 'user', content: 'hi' }] } },
		},
		{ path: '/v1/chat/completions', streamed: false },
	],
	[
		'Chat, a stream cut short (POST /v1/chat/completions, stream: true)',
		{
			name: 'Chat',
			type: 'genGatewayChat',
			credentials: true,
			parameters: {
				operation: 'message',
				model: model('gpt-4o-mini'),
				messages: { values: [{ role: 'user', content: 'hi' }] },
				options: { streaming: 'always' },
			},
		},
		{ path: '/v1/chat/completions', streamed: true },
	],
] as Array<[string, HarnessNode, { path: string; streamed: boolean }]>)('%s: the run is cancelled, not failed', async (_case, node, expected) => {
	const { request, result } = await cancelInFlight(node);
	expect(request).toEqual(expected);
	expect(result.run.status).toBe('canceled');
	const error = result.nodeError(node.name);
	// Handed on as it was: neither wrapped by asNodeError nor turned into a "broken stream" error.
	expect(error?.name).not.toBe('NodeOperationError');
	expect(error?.message ?? '').not.toMatch(/stream of POST .* broke/);
});
