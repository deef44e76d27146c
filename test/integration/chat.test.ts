/** The Chat node against the mock over loopback, through n8n-core's real engine. */
import { createServer } from 'http';
import type { IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject, IExecuteFunctions, INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { findSecret } from '../support/videoRun';

const API_KEY = 'sentinel-key-chat-5c4b3a29';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: API_KEY });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const model = (value: string) => ({ __rl: true, mode: 'id', value });

const message = (content: string, extra: IDataObject = {}) => ({
	operation: 'message',
	model: model('gpt-4o-mini'),
	messages: { values: [{ role: 'user', content }] },
	...extra,
});

const response = (content: string, extra: IDataObject = {}) => ({
	operation: 'response',
	model: model('gk-chat-1'),
	input: { values: [{ role: 'user', content }] },
	...extra,
});

/** Chunks sent by the streaming probe (below), in order. */
let chunks: Array<{ type: string; itemIndex: number; content?: unknown }> = [];

/**
 * The Chat node as n8n runs it when it streams an execution to a chat: the real node and context, with only
 * `isStreaming` and `sendChunk` answered by the test (the harness has no chat connection to stream to).
 */
function streamingProbe(streaming: 'on' | 'absent'): INodeType {
	const node = new GenGatewayChat();
	return {
		description: { ...node.description, name: `chatStreamingProbe_${streaming}` },
		methods: node.methods,
		async execute(this: IExecuteFunctions) {
			const ctx = new Proxy(this, {
				get(target, prop, receiver) {
					if (prop === 'isStreaming') return streaming === 'on' ? () => true : undefined;
					if (prop === 'sendChunk') {
						if (streaming === 'absent') return undefined;
						return async (type: string, itemIndex: number, content?: unknown) => {
							chunks.push({ type, itemIndex, ...(content === undefined ? {} : { content }) });
						};
					}
					return Reflect.get(target, prop, receiver) as unknown;
				},
			});
			return await node.execute.call(ctx);
		},
	};
}

async function runChat(
	parameters: IDataObject,
	extra: Partial<HarnessNode> & { input?: IDataObject[]; apiKey?: string; baseUrl?: string; type?: string } = {},
): Promise<RunResult> {
	const { input, apiKey, baseUrl, type, ...node } = extra;
	const result = await runWorkflow({
		nodes: [{ name: 'Chat', type: type ?? 'genGatewayChat', parameters, credentials: true, ...node }],
		input,
		credentials: { baseUrl: baseUrl ?? mock.url, apiKey: apiKey ?? mock.apiKey },
		extraNodeTypes: [streamingProbe('on'), streamingProbe('absent')],
	});
	// Whatever happened, the key is nowhere in the outputs, errors or logs.
	expect(findSecret(API_KEY, result.run, result.logs)).toEqual([]);
	return result;
}

async function chatRequests(): Promise<IDataObject[]> {
	return (await mock.log())
		.filter((entry) => entry.method === 'POST')
		.map((entry) => entry.body as IDataObject);
}

describe('Message a Model (POST /v1/chat/completions)', () => {
	it('returns the simplified reply with every option in the request body', async () => {
		const result = await runChat(
			message('hello there', {
				systemMessage: 'be brief',
				options: {
					temperature: 0.3,
					topP: 0.9,
					maxTokens: 50,
					stop: '["END", "\\n\\n"]',
					seed: 42,
					extraBody: '{"user": "u-1", "top_p": 0.5}',
				},
			}),
		);
		expect(result.error).toBeUndefined();
		const [item] = result.output();
		expect(item.json).toEqual({
			content: 'Echo: hello there',
			role: 'assistant',
			finish_reason: 'stop',
			usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
			model: 'gpt-4o-mini',
		});
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(await chatRequests()).toEqual([
			{
				model: 'gpt-4o-mini',
				messages: [
					{ role: 'system', content: 'be brief' },
					{ role: 'user', content: 'hello there' },
				],
				temperature: 0.3,
				top_p: 0.5, // the extra body fields win
				max_tokens: 50,
				stop: ['END', '\n\n'],
				seed: 42,
				user: 'u-1',
			},
		]);
	});

	it('returns the full response when Simplify is off', async () => {
		const result = await runChat(message('full please', { simplify: false }));
		expect(result.output()[0].json).toMatchObject({
			id: expect.stringMatching(/^chatcmpl-/),
			object: 'chat.completion',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: full please' }, finish_reason: 'stop' }],
			usage: expect.any(Object),
		});
	});

	it('answers each input item, each paired with its item', async () => {
		const result = await runChat(message('={{ $json.q }}'), { input: [{ q: 'one' }, { q: 'two' }, { q: 'three' }] });
		expect(result.output().map((item) => [item.json.content, item.pairedItem])).toEqual([
			['Echo: one', { item: 0 }],
			['Echo: two', { item: 1 }],
			['Echo: three', { item: 2 }],
		]);
	});

	it('sends no stream field unless asked, when n8n does not stream the execution', async () => {
		await runChat(message('plain'));
		const [body] = await chatRequests();
		expect(body.stream).toBeUndefined();
		expect(body.stream_options).toBeUndefined();
	});
});

describe('streaming (section 6)', () => {
	const TEXT = 'héllo   wörld, 🌍 streams  in pieces';

	it('assembles the deltas exactly as the unstreamed answer, with usage, ending at [DONE]', async () => {
		const plain = await runChat(message(TEXT));
		const streamed = await runChat(message(TEXT, { options: { streaming: 'always' } }));
		expect(streamed.error).toBeUndefined();
		expect(streamed.output()[0].json).toEqual(plain.output()[0].json);
		expect(streamed.output()[0].json.content).toBe(`Echo: ${TEXT}`);
		const bodies = await chatRequests();
		expect(bodies[1]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
		const log = await mock.log();
		expect(log.filter((entry) => entry.method === 'POST').map((entry) => entry.status)).toEqual([200, 200]);
	});

	it('gives the full response in the unstreamed shape when Simplify is off', async () => {
		const result = await runChat(message('abc def', { simplify: false, options: { streaming: 'always' } }));
		expect(result.output()[0].json).toMatchObject({
			id: expect.stringMatching(/^chatcmpl-/),
			object: 'chat.completion',
			model: 'gpt-4o-mini',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: abc def' }, finish_reason: 'stop' }],
			usage: { completion_tokens: 3 },
		});
	});

	it('forwards each delta to the chat when n8n streams the execution, and still returns the whole message', async () => {
		chunks = [];
		const result = await runChat(message('one two three'), { type: 'chatStreamingProbe_on' });
		expect(result.error).toBeUndefined();
		expect(result.output()[0].json.content).toBe('Echo: one two three');
		// Auto mode asked for a stream because the execution is streamed.
		expect((await chatRequests())[0].stream).toBe(true);
		expect(chunks[0]).toEqual({ type: 'begin', itemIndex: 0 });
		expect(chunks[chunks.length - 1]).toEqual({ type: 'end', itemIndex: 0 });
		const items = chunks.filter((c) => c.type === 'item');
		expect(items.length).toBeGreaterThanOrEqual(4);
		expect(items.map((c) => c.content).join('')).toBe('Echo: one two three');
	});

	it('does not stream on an n8n without isStreaming/sendChunk (before 1.101)', async () => {
		chunks = [];
		const result = await runChat(message('old n8n'), { type: 'chatStreamingProbe_absent' });
		expect(result.output()[0].json.content).toBe('Echo: old n8n');
		expect((await chatRequests())[0].stream).toBeUndefined();
		expect(chunks).toEqual([]);
	});

	it('never streams with Streaming "Never", even when n8n streams the execution', async () => {
		chunks = [];
		await runChat(message('no stream', { options: { streaming: 'never' } }), { type: 'chatStreamingProbe_on' });
		expect((await chatRequests())[0].stream).toBeUndefined();
		expect(chunks).toEqual([]);
	});

	it('a cut stream is an error that says the output is incomplete and the work may not be cancelled; not resent', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'sse-cut' }]);
		const result = await runChat(message('alpha beta gamma delta epsilon', { options: { streaming: 'always' } }));
		const error = result.nodeError('Chat')!;
		expect(error).toBeDefined();
		expect(error.message).toMatch(/stream .* broke before it was complete/);
		expect(error.message).toMatch(/output is incomplete/);
		expect(error.message).toMatch(/may not have been cancelled/);
		expect((await mock.log()).filter((entry) => entry.method === 'POST')).toHaveLength(1);
	});

	it('keeps the partial text in the error item under Continue On Fail', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'sse-cut' }]);
		chunks = [];
		const result = await runChat(message('alpha beta gamma delta epsilon', { options: { streaming: 'always' } }), {
			continueOnFail: true,
			type: 'chatStreamingProbe_on',
		});
		const [item] = result.output();
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(item.json.error).toMatch(/output is incomplete/);
		// The mock sends three events before the cut: the role, "Echo:" and " alpha".
		expect(item.json.partialContent).toBe('Echo: alpha');
		expect(chunks.filter((c) => c.type === 'item').map((c) => c.content).join('')).toBe('Echo: alpha');
		expect(chunks[chunks.length - 1]).toEqual({ type: 'end', itemIndex: 0 });
	});
});

/**
 * A service with stream behaviours the mock has no fault for: it answers the chat POST with `write(res)` and records
 * whether the client closed the connection.
 */
async function withStreamServer(
	write: (res: ServerResponse) => void,
	test: (baseUrl: string, closedByClient: () => boolean) => Promise<void>,
): Promise<void> {
	let closedByClient = false;
	const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
		req.resume();
		req.on('end', () => write(res));
		res.on('close', () => {
			if (!res.writableEnded) closedByClient = true;
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		await test(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => closedByClient);
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}

const sse = (res: ServerResponse, contents: string[], tail: string) => {
	res.writeHead(200, { 'Content-Type': 'text/event-stream' });
	for (const content of contents) {
		res.write(`data: ${JSON.stringify({ model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`);
	}
	res.write(tail);
};

describe('the end of a stream', () => {
	it('ends at data: [DONE] even when the connection stays open, and ignores anything after it', async () => {
		await withStreamServer(
			(res) => sse(res, ['Hel', 'lo'], 'data: [DONE]\n\ndata: {"choices":[{"index":0,"delta":{"content":"NOT THIS"}}]}\n\n'),
			async (baseUrl, closedByClient) => {
				const result = await runChat(message('x', { options: { streaming: 'always' } }), { baseUrl });
				expect(result.error).toBeUndefined();
				expect(result.output()[0].json).toMatchObject({ content: 'Hello', model: 'm' });
				// The node hung up itself (the server never ended the answer); the server sees it a moment later.
				for (let i = 0; i < 100 && !closedByClient(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
				expect(closedByClient()).toBe(true);
			},
		);
	});

	it('a stream that ends cleanly but without [DONE] is incomplete', async () => {
		await withStreamServer(
			(res) => {
				sse(res, ['Hel', 'lo'], '');
				res.end();
			},
			async (baseUrl) => {
				const result = await runChat(message('x', { options: { streaming: 'always' } }), { baseUrl, continueOnFail: true });
				const [item] = result.output();
				expect(item.json.error).toMatch(/\(the connection closed before data: \[DONE\]\): the output is incomplete/);
				expect(item.json.partialContent).toBe('Hello');
			},
		);
	});

	it('an event that is not JSON breaks the stream, keeping what came before', async () => {
		await withStreamServer(
			(res) => sse(res, ['Hel'], 'data: {"choices": [tru\n\n'),
			async (baseUrl) => {
				const result = await runChat(message('x', { options: { streaming: 'always' } }), { baseUrl, continueOnFail: true });
				expect(result.output()[0].json).toMatchObject({
					error: expect.stringMatching(/an event whose data is not JSON/),
					partialContent: 'Hel',
				});
			},
		);
	});

	it('an error event in the stream is the service error, with the partial text', async () => {
		await withStreamServer(
			(res) => sse(res, ['Hel'], 'data: {"error": {"message": "upstream overloaded"}}\n\n'),
			async (baseUrl) => {
				const result = await runChat(message('x', { options: { streaming: 'always' } }), { baseUrl, continueOnFail: true });
				expect(result.output()[0].json).toMatchObject({
					error: 'POST /v1/chat/completions failed while streaming: upstream overloaded',
					partialContent: 'Hel',
				});
			},
		);
	});

	it('a service that ignores stream: true and answers JSON is taken as the whole answer', async () => {
		await withStreamServer(
			(res) => {
				res.writeHead(200, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }] }));
			},
			async (baseUrl) => {
				const result = await runChat(message('x', { options: { streaming: 'always' } }), { baseUrl });
				expect(result.output()[0].json).toMatchObject({ content: 'whole', finish_reason: 'stop' });
			},
		);
	});
});

describe('Create a Response (POST /v1/responses)', () => {
	it('sends instructions and input and returns the simplified reply', async () => {
		const result = await runChat(
			response('what is up', { instructions: 'answer kindly', options: { maxTokens: 20, temperature: 0 } }),
		);
		expect(result.error).toBeUndefined();
		expect(result.output()[0].json).toEqual({
			content: 'Echo: what is up',
			role: 'assistant',
			finish_reason: 'stop',
			usage: { input_tokens: 5, output_tokens: 4, total_tokens: 9 },
			model: 'gk-chat-1',
		});
		expect(await chatRequests()).toEqual([
			{
				model: 'gk-chat-1',
				input: [{ role: 'user', content: 'what is up' }],
				instructions: 'answer kindly',
				max_output_tokens: 20,
				temperature: 0,
			},
		]);
	});

	it('reports a cut at the token limit as finish_reason "length"', async () => {
		const result = await runChat(response('one two three four', { options: { maxTokens: 2 } }));
		expect(result.output()[0].json).toMatchObject({ content: 'Echo: one', finish_reason: 'length' });
	});

	it('streams: the same reply as unstreamed, and the full response from the terminal event', async () => {
		const plain = await runChat(response('stream me  please'));
		const streamed = await runChat(response('stream me  please', { options: { streaming: 'always' } }));
		expect(streamed.output()[0].json).toEqual(plain.output()[0].json);
		const full = await runChat(response('stream me  please', { simplify: false, options: { streaming: 'always' } }));
		expect(full.output()[0].json).toMatchObject({ object: 'response', status: 'completed', output_text: 'Echo: stream me  please' });
	});

	it('a cut response stream is an incomplete-output error', async () => {
		await mock.setFaults([{ path: '^/v1/responses$', kind: 'sse-cut' }]);
		const result = await runChat(response('a b c d e f', { options: { streaming: 'always' } }), { continueOnFail: true });
		const [item] = result.output();
		expect(item.json.error).toMatch(/output is incomplete/);
		expect(typeof item.json.partialContent).toBe('string');
	});
});

describe('JSON output', () => {
	it('parses the content into an object (chat completions and responses)', async () => {
		const chat = await runChat(message('give json', { options: { jsonOutput: true } }));
		expect(chat.output()[0].json.content).toEqual({ echo: 'give json' });
		const resp = await runChat(response('give json', { options: { jsonOutput: true } }));
		expect(resp.output()[0].json.content).toEqual({ echo: 'give json' });
		const [chatBody, respBody] = await chatRequests();
		expect(chatBody.response_format).toEqual({ type: 'json_object' });
		expect(respBody.text).toEqual({ format: { type: 'json_object' } });
	});

	it('parses a streamed JSON reply too', async () => {
		const result = await runChat(message('streamed json', { options: { jsonOutput: true, streaming: 'always' } }));
		expect(result.output()[0].json.content).toEqual({ echo: 'streamed json' });
	});

	it('fails clearly when the reply is not JSON', async () => {
		// The extra body removes response_format, so the mock answers plain text while the node expects JSON.
		const result = await runChat(message('not json', { options: { jsonOutput: true, extraBody: '{"response_format": null}' } }));
		const error = result.nodeError('Chat')!;
		expect(error.message).toBe('The model did not answer with a JSON object');
		expect((error as { description?: string }).description).toContain('"Echo: not json"');
		expect((await chatRequests())[0].response_format).toBeUndefined();
	});
});

describe('errors', () => {
	it('400: the service message and the hint; Continue On Fail gives an error item', async () => {
		const failed = await runChat({ ...message('x'), model: model('sd_2.0_discount') });
		const error = failed.nodeError('Chat') as Error & { description?: string; httpCode?: string };
		expect(error.message).toBe("POST /v1/chat/completions failed with 400: model: 'sd_2.0_discount' is not a chat model");
		expect(error.description).toMatch(/invalid/);
		expect(error.httpCode).toBe('400');

		const kept = await runChat({ ...message('x'), model: model('sd_2.0_discount') }, { continueOnFail: true });
		expect(kept.output()).toEqual([
			{
				json: {
					error: "POST /v1/chat/completions failed with 400: model: 'sd_2.0_discount' is not a chat model",
					errorDescription: expect.stringMatching(/invalid/),
					httpCode: '400',
				},
				pairedItem: { item: 0 },
			},
		]);
	});

	it('403: a wrong key is reported with the permission hint, and neither key appears anywhere', async () => {
		const wrongKey = 'wrong-key-chat-7d6e5f';
		const result = await runChat(message('x'), { apiKey: wrongKey, continueOnFail: true });
		const [item] = result.output();
		expect(item.json.httpCode).toBe('403');
		expect(item.json.error).toMatch(/invalid or missing API key/);
		expect(item.json.errorDescription).toMatch(/permissions/);
		expect(findSecret(wrongKey, result.run, result.logs)).toEqual([]);
	});

	it('429 with Retry-After: waits and retries (the service refused, nothing was done)', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'status', status: 429, retryAfter: 1 }]);
		const started = Date.now();
		const result = await runChat(message('after the limit'));
		expect(result.output()[0].json.content).toBe('Echo: after the limit');
		expect(Date.now() - started).toBeGreaterThanOrEqual(900);
		expect((await mock.log()).map((entry) => entry.status)).toEqual([429, 200]);
	});

	it('429 that persists: the rate-limit hint', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'status', status: 429, retryAfter: 3600, times: -1 }]);
		const error = (await runChat(message('x'))).nodeError('Chat') as Error & { description?: string };
		expect(error.message).toMatch(/failed with 429: injected fault: HTTP 429/);
		expect(error.description).toMatch(/Rate limit/);
	});

	it('a connection cut after the request was accepted is never resent (a paid request)', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'cut-after-accept' }]);
		const error = (await runChat(message('paid'))).nodeError('Chat')!;
		expect(error.message).toMatch(/outcome of POST \/v1\/chat\/completions is unknown/);
		expect((await mock.log()).filter((entry) => entry.method === 'POST')).toHaveLength(1);
	});

	it('a 200 with a truncated JSON body is an unknown outcome, not resent', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'malformed-json' }]);
		const error = (await runChat(message('paid'))).nodeError('Chat')!;
		expect(error.message).toMatch(/outcome of POST \/v1\/chat\/completions is unknown/);
		expect((await mock.log()).filter((entry) => entry.method === 'POST')).toHaveLength(1);
	});

	it('a bad Extra Body Fields value fails before any request', async () => {
		const result = await runChat(message('x', { options: { extraBody: '[1, 2]' } }));
		expect(result.nodeError('Chat')!.message).toBe('Extra Body Fields must be a JSON object');
		expect(await mock.log()).toEqual([]);
	});
});
