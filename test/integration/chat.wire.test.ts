/**
 * Service errors are errors, and a complete answer is complete: Chat (and Image, for the 200 error body) through n8n's
 * engine against loopback servers of the test's own that send the bytes OpenAI-format services send.
 */
import { createServer } from 'http';
import type { IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject, IExecuteFunctions, INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';

const API_KEY = 'sentinel-key-wire-5e6f';

jest.setTimeout(30_000);

interface Served {
	url: string;
	posts: () => number;
	closedByClient: () => boolean;
}

async function withServer(handler: (res: ServerResponse, req: IncomingMessage) => void, test: (s: Served) => Promise<void>): Promise<void> {
	let posts = 0;
	let closedByClient = false;
	const server: Server = createServer((req, res) => {
		req.resume();
		req.on('end', () => {
			if (req.method === 'POST') posts++;
			res.on('close', () => {
				if (!res.writableEnded) closedByClient = true;
			});
			handler(res, req);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		const { port } = server.address() as AddressInfo;
		await test({ url: `http://127.0.0.1:${port}`, posts: () => posts, closedByClient: () => closedByClient });
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}

const json = (res: ServerResponse, body: unknown) => {
	res.writeHead(200, { 'Content-Type': 'application/json' });
	res.end(JSON.stringify(body));
};
const sseHead = (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'text/event-stream' });
const delta = (content: string) =>
	`data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const chat = (options: IDataObject = {}) => ({
	operation: 'message',
	model: model('m'),
	messages: { values: [{ role: 'user', content: 'hi' }] },
	options,
});
const responses = (options: IDataObject = {}) => ({
	operation: 'response',
	model: model('m'),
	input: { values: [{ role: 'user', content: 'hi' }] },
	options,
});
const image = () => ({ operation: 'generate', model: model('img-1'), prompt: 'a fox', size: '256x256' });

/** Chunks the node sent to n8n's chat (streamingProbe). */
let chunks: Array<{ type: string; content?: unknown }> = [];

/** The Chat node as n8n runs it while streaming an execution to a chat: only isStreaming/sendChunk are the test's. */
const streamingProbe: INodeType = (() => {
	const node = new GenGatewayChat();
	return {
		description: { ...node.description, name: 'chatWireStreamingProbe' },
		methods: node.methods,
		async execute(this: IExecuteFunctions) {
			const ctx = new Proxy(this, {
				get(target, prop, receiver) {
					if (prop === 'isStreaming') return () => true;
					if (prop === 'sendChunk') {
						return async (type: string, _itemIndex: number, content?: unknown) => {
							chunks.push({ type, ...(content === undefined ? {} : { content }) });
						};
					}
					return Reflect.get(target, prop, receiver) as unknown;
				},
			});
			return await node.execute.call(ctx);
		},
	};
})();

beforeEach(() => {
	chunks = [];
});

async function run(type: string, parameters: IDataObject, baseUrl: string, continueOnFail = false): Promise<RunResult> {
	return await runWorkflow({
		nodes: [{ name: 'Node', type, parameters, credentials: true, continueOnFail }],
		credentials: { baseUrl, apiKey: API_KEY },
		extraNodeTypes: [streamingProbe],
	});
}

describe('an SSE error event in a chat-completions stream fails the item with the service message', () => {
	it.each([
		['event: error, data {"message", "code"}', 'event: error\ndata: {"message":"Upstream overloaded","code":"server_error"}\n\n'],
		['event: error, data {"error": {...}}', 'event: error\ndata: {"error":{"message":"Upstream overloaded","type":"server_error"}}\n\n'],
		['no event name, data {"error": {...}}', 'data: {"error":{"message":"Upstream overloaded"}}\n\n'],
		['event: error, plain-text data', 'event: error\ndata: Upstream overloaded\n\n'],
	])('%s, even when data: [DONE] follows; the partial text is kept', async (_name, errorEvent) => {
		await withServer(
			(res) => {
				sseHead(res);
				res.end(`${delta('Hel')}${errorEvent}data: [DONE]\n\n`);
			},
			async (server) => {
				const result = await run('genGatewayChat', chat({ streaming: 'always' }), server.url, true);
				expect(result.output()[0].json).toMatchObject({
					error: 'POST /v1/chat/completions failed while streaming: Upstream overloaded',
					partialContent: 'Hel',
				});
				expect(server.posts()).toBe(1);
			},
		);
	});
});

describe('a 200 whose body is {"error": {...}} is the service error', () => {
	const errorBody = { error: { message: 'The model `m` does not exist', type: 'invalid_request_error', code: 'model_not_found' } };
	it.each([
		['Chat: Message a Model', 'genGatewayChat', chat(), '/v1/chat/completions'],
		['Chat: Message a Model, streaming asked but JSON answered', 'genGatewayChat', chat({ streaming: 'always' }), '/v1/chat/completions'],
		['Chat: Create a Response', 'genGatewayChat', responses(), '/v1/responses'],
		['Image', 'genGatewayImage', image(), '/v1/images/generations'],
	])('%s', async (_name, type, parameters, path) => {
		await withServer(
			(res) => json(res, errorBody),
			async (server) => {
				const result = await run(type, parameters, server.url);
				const error = result.nodeError('Node') as Error & { context?: IDataObject };
				expect(error?.message).toBe(`POST ${path} failed: The model \`m\` does not exist`);
				expect(error.context?.outcomeUnknown).toBe(false);
				expect(server.posts()).toBe(1);
			},
		);
	});
});

describe('a complete answer is complete: the node returns at once and hangs up', () => {
	it('Responses: after response.completed, with the connection left open and no [DONE]', async () => {
		const final = {
			id: 'r1',
			object: 'response',
			status: 'completed',
			model: 'm',
			output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }],
		};
		await withServer(
			(res) => {
				sseHead(res);
				res.write(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'Hello' })}\n\n`);
				res.write(`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: final })}\n\n`);
				// …and nothing more: the connection stays open.
			},
			async (server) => {
				const started = Date.now();
				// Before the fix: waited until the Timeout (6 s here) and failed as a broken stream.
				const result = await run('genGatewayChat', responses({ streaming: 'always', timeout: 6 }), server.url);
				expect(result.error).toBeUndefined();
				expect(result.output()[0].json).toMatchObject({ content: 'Hello', finish_reason: 'stop' });
				expect(Date.now() - started).toBeLessThan(4000);
				for (let i = 0; i < 100 && !server.closedByClient(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
				expect(server.closedByClient()).toBe(true);
			},
		);
	});

	it('Chat completions: a data: [DONE] line without the blank line after it, connection left open', async () => {
		await withServer(
			(res) => {
				sseHead(res);
				res.write(`${delta('Hel')}${delta('lo')}data: [DONE]\n`);
			},
			async (server) => {
				const started = Date.now();
				const result = await run('genGatewayChat', chat({ streaming: 'always', timeout: 6 }), server.url);
				expect(result.error).toBeUndefined();
				expect(result.output()[0].json).toMatchObject({ content: 'Hello' });
				expect(Date.now() - started).toBeLessThan(4000);
				for (let i = 0; i < 100 && !server.closedByClient(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
				expect(server.closedByClient()).toBe(true);
			},
		);
	});
});

describe("n8n's chat gets the service's message when the node fails", () => {
	// n8n sends a failed node's `description` to the chat (workflow-execute.js, handleNodeExecutionError: one chunk
	// { type: 'error', content: executionError.description }); the message alone would never reach the chat user.
	it('an error event in the stream', async () => {
		await withServer(
			(res) => {
				sseHead(res);
				res.end(`${delta('Hel')}event: error\ndata: {"message":"Upstream overloaded","code":"server_error"}\n\n`);
			},
			async (server) => {
				const result = await run('chatWireStreamingProbe', chat(), server.url);
				const error = result.nodeError('Node') as Error & { description?: string };
				expect(error.description).toMatch(/^POST \/v1\/chat\/completions failed while streaming: Upstream overloaded\n\n/);
				expect(chunks.map((chunk) => chunk.type)).toEqual(['begin', 'item', 'end']);
			},
		);
	});

	it('a refusal before the stream began (400 with error.message)', async () => {
		await withServer(
			(res) => {
				res.writeHead(400, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ error: { message: 'max_tokens is too large for this model' } }));
			},
			async (server) => {
				const result = await run('chatWireStreamingProbe', chat(), server.url);
				const error = result.nodeError('Node') as Error & { description?: string };
				expect(error.description).toContain('max_tokens is too large for this model');
			},
		);
	});

	it('not when the execution is not streamed to a chat (the editor shows message and description apart)', async () => {
		await withServer(
			(res) => {
				res.writeHead(400, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ error: { message: 'max_tokens is too large for this model' } }));
			},
			async (server) => {
				const result = await run('genGatewayChat', chat(), server.url);
				const error = result.nodeError('Node') as Error & { description?: string };
				expect(error.message).toContain('max_tokens is too large for this model');
				expect(error.description).not.toContain('max_tokens is too large for this model');
			},
		);
	});
});
