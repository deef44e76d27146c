// Gen Gateway Chat Model's model (what supplyData gives the AI Agent: @n8n/ai-node-sdk's supplyModel → LangChain's
// ChatOpenAI on the OpenAI client) against a loopback server of the test's own that sends the bytes OpenAI-format
// services send: tool-call deltas split across chunks, a usage chunk, [DONE], an error event in the stream, a 429
// with Retry-After; and the money rule: an unknown outcome (dropped after the request arrived, a 500, a timeout) is
// sent exactly once, a 429 or a refused connection is retried.
// Time: about 12 s (a 429's Retry-After of 3 s and p-retry's 1–2 s backoff are really waited).
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { passthroughEgressFilter } from '@n8n/backend-network/egress';
import type { INode, ISupplyDataFunctions } from 'n8n-workflow';

import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { NEEDS_N8N_2, supplyModelFailure } from '../../nodes/GenGatewayChatModel/sdkHost';
import { resetConnection, sendJson, startScriptedServer, type Answer, type ScriptedServer } from '../support/scriptedServer';

const API_KEY = 'sk-wire-chat-model-7d1c9e';
const NODE = { name: 'Gen Gateway Chat Model', type: 'n8n-nodes-gen-gateway.genGatewayChatModel', typeVersion: 1 } as INode;

jest.setTimeout(30_000);

/** The tool the agent offers (as LangChain's bindTools takes an OpenAI-format tool). */
const VIDEO_TOOL = {
	type: 'function' as const,
	function: {
		name: 'Generate_Video',
		description: 'Generates a video',
		parameters: {
			type: 'object',
			properties: { prompt: { type: 'string' }, duration: { type: 'number' } },
			required: ['prompt'],
		},
	},
};

interface Model {
	invoke(input: unknown): Promise<{ content: unknown; tool_calls?: unknown[]; usage_metadata?: unknown }>;
	stream(input: unknown): Promise<AsyncIterable<{ content: unknown; tool_calls?: unknown[]; usage_metadata?: unknown; concat(other: unknown): unknown }>>;
	bindTools(tools: unknown[]): Model;
}

/** An ISupplyDataFunctions with what the node and the SDK's ChatOpenAI ask of it. */
function supplyContext(baseUrl: string, options: Record<string, unknown>, model = 'gpt-4o-mini'): ISupplyDataFunctions {
	const parameters: Record<string, unknown> = { model, options };
	return {
		getNode: () => NODE,
		getCredentials: async () => ({ baseUrl, apiKey: API_KEY }),
		getNodeParameter: (name: string, _index: number, fallback?: unknown) => parameters[name] ?? fallback,
		getNextRunIndex: () => 0,
		addInputData: () => ({ index: 0 }),
		addOutputData: () => undefined,
		setMetadata: () => undefined,
		getExecutionCancelSignal: () => undefined,
		logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
		// n8n's filter when no SSRF policy is set (n8n-core: OutboundHttp.egressFilter).
		helpers: { getSecureEgressFilter: () => passthroughEgressFilter },
	} as unknown as ISupplyDataFunctions;
}

async function modelFor(baseUrl: string, options: Record<string, unknown> = {}): Promise<Model> {
	const supplied = await new GenGatewayChatModel().supplyData.call(supplyContext(baseUrl, options), 0);
	return supplied.response as Model;
}

/** One SSE `data:` line per payload, as OpenAI-format services stream chat completions. */
function sse(res: ServerResponse, events: Array<unknown | string>, headers: Record<string, string> = {}): void {
	res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
	for (const event of events) res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
	res.end();
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
	id: 'chatcmpl-1',
	object: 'chat.completion.chunk',
	created: 1_700_000_000,
	model: 'gpt-4o-mini',
	choices: [{ index: 0, delta, finish_reason: finish }],
	...extra,
});

let server: ScriptedServer | undefined;
async function serve(answer: Answer): Promise<ScriptedServer> {
	server = await startScriptedServer(answer);
	return server;
}
afterEach(async () => {
	await server?.close();
	server = undefined;
});

const bodies = (s: ScriptedServer) => s.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>);

/** Collects a thrown error's message and description, and checks that the key is in neither. */
async function failure(promise: Promise<unknown>): Promise<{ message: string; description: string }> {
	const error = (await promise.then(
		() => {
			throw new Error('expected the call to fail');
		},
		(caught: unknown) => caught,
	)) as { message: string; description?: string };
	const text = { message: String(error.message), description: String(error.description ?? '') };
	expect(JSON.stringify(text)).not.toContain(API_KEY);
	return text;
}

describe('Gen Gateway Chat Model against an OpenAI-format wire', () => {
	it('streamed: tool-call deltas split across chunks become one tool call, the usage chunk its usage, up to [DONE]', async () => {
		const s = await serve((_req, res) =>
			sse(res, [
				chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'Generate_Video', arguments: '' } }] }),
				chunk({ tool_calls: [{ index: 0, function: { arguments: '{"prompt":"a fox ' } }] }),
				chunk({ tool_calls: [{ index: 0, function: { arguments: 'in the snow","dur' } }] }),
				chunk({ tool_calls: [{ index: 0, function: { arguments: 'ation":6}' } }] }),
				chunk({}, 'tool_calls'),
				{ ...chunk({}), choices: [], usage: { prompt_tokens: 42, completion_tokens: 17, total_tokens: 59 } },
				'[DONE]',
			]),
		);
		const model = (await modelFor(s.url, { temperature: 0.2, maxTokens: 300, topP: 0.9 })).bindTools([VIDEO_TOOL]);
		let message: { tool_calls?: unknown[]; usage_metadata?: unknown; concat(other: unknown): unknown } | undefined;
		for await (const piece of await model.stream('Make a fox video')) message = message ? (message.concat(piece) as typeof piece) : piece;
		expect(message?.tool_calls).toEqual([{ name: 'Generate_Video', args: { prompt: 'a fox in the snow', duration: 6 }, id: 'call_1', type: 'tool_call' }]);
		expect(message?.usage_metadata).toMatchObject({ input_tokens: 42, output_tokens: 17, total_tokens: 59 });

		// What went out: one POST to the service's /v1 with the key, the options and the tool.
		expect(s.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /v1/chat/completions']);
		expect(s.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
		expect(bodies(s)[0]).toMatchObject({
			model: 'gpt-4o-mini',
			stream: true,
			temperature: 0.2,
			max_tokens: 300,
			top_p: 0.9,
			tools: [{ type: 'function', function: { name: 'Generate_Video' } }],
			messages: [{ role: 'user', content: 'Make a fox video' }],
		});
	});

	it('not streamed: the tool call of a complete answer, then a tool result goes back; JSON mode sends response_format', async () => {
		const s = await serve((_req, res, index) =>
			sendJson(res, 200, {
				id: `chatcmpl-${index}`,
				object: 'chat.completion',
				created: 1_700_000_000,
				model: 'gpt-4o-mini',
				choices: [
					{
						index: 0,
						finish_reason: 'tool_calls',
						message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'Generate_Video', arguments: '{"prompt":"a boat"}' } }] },
					},
				],
				usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
			}),
		);
		const model = (await modelFor(`${s.url}/v1/`, { responseFormat: 'json_object' })).bindTools([VIDEO_TOOL]);
		const answer = await model.invoke('A boat, in JSON');
		expect(answer.tool_calls).toEqual([{ name: 'Generate_Video', args: { prompt: 'a boat' }, id: 'call_9', type: 'tool_call' }]);
		// The credential's base URL with /v1 and a slash still reaches /v1/chat/completions once.
		expect(s.requests.map((request) => request.path)).toEqual(['/v1/chat/completions']);
		expect(bodies(s)[0]).toMatchObject({ response_format: { type: 'json_object' } });
		expect(bodies(s)[0].stream).toBeFalsy();
	});

	it('an error event in the stream fails the call with the service\'s message, and is not resent', async () => {
		const s = await serve((_req, res) =>
			sse(res, [chunk({ role: 'assistant', content: 'Hel' }), { error: { message: 'The model is overloaded mid-answer', type: 'server_error' } }]),
		);
		const model = await modelFor(s.url);
		const error = await failure(
			(async () => {
				for await (const piece of await model.stream('Hello')) void piece;
			})(),
		);
		expect(error.message).toContain('The model is overloaded mid-answer');
		expect(s.requests).toHaveLength(1);
	});

	it('a 429 with Retry-After: waited for and retried (nothing was created), then the answer', async () => {
		const s = await serve((_req, res, index) => {
			if (index === 0) return sendJson(res, 429, { error: { message: 'Too many requests, slow down', type: 'rate_limit' } }, { 'retry-after': '3' });
			sendJson(res, 200, {
				id: 'chatcmpl-2',
				object: 'chat.completion',
				created: 1_700_000_000,
				model: 'gpt-4o-mini',
				choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello after waiting' } }],
			});
		});
		const started = Date.now();
		const answer = await (await modelFor(s.url)).invoke('Hello');
		expect(answer.content).toBe('Hello after waiting');
		expect(s.requests).toHaveLength(2);
		// p-retry's own first backoff is 1–2 s: only the Retry-After makes it 3 s.
		expect(Date.now() - started).toBeGreaterThanOrEqual(2950);
	});

	it('429 every time: Maximum Retries more, then the service\'s message and the hint', async () => {
		const s = await serve((_req, res) => sendJson(res, 429, { error: { message: 'Rate limit reached for gpt-4o-mini' } }, { 'retry-after': '0' }));
		const error = await failure((await modelFor(s.url, { maxRetries: 1 })).invoke('Hello'));
		expect(s.requests).toHaveLength(2);
		expect(error.message).toBe('POST /v1/chat/completions failed with 429: Rate limit reached for gpt-4o-mini');
		expect(error.description).toMatch(/^Rate limit exceeded/);
	});

	it('money rule: the connection drops after the request arrived → exactly one request, "outcome unknown"', async () => {
		const s = await serve((_req, res) => resetConnection(res));
		const error = await failure((await modelFor(s.url, { maxRetries: 3 })).invoke('Hello'));
		expect(s.requests).toHaveLength(1);
		expect(error.message).toMatch(/^The outcome of POST \/v1\/chat\/completions is unknown: the connection failed/);
		expect(error.message).toMatch(/it was not resubmitted\.$/);
		expect(error.description).toMatch(/resubmitting blindly can pay for the same work twice/);
	});

	it('money rule: a 500 and a timeout are sent once; a 401 is a refusal with the service\'s words, never the key', async () => {
		const s500 = await serve((_req, res) => sendJson(res, 500, { error: { message: 'Internal error after accepting' } }));
		const e500 = await failure((await modelFor(s500.url, { maxRetries: 3 })).invoke('Hello'));
		expect(s500.requests).toHaveLength(1);
		expect(e500.message).toBe('POST /v1/chat/completions failed with 500: Internal error after accepting');
		expect(e500.description).toMatch(/outcome is unknown, so it was not resent/);
		await s500.close();

		const silent = await serve(() => undefined); // reads the request, never answers
		const timedOut = await failure((await modelFor(silent.url, { maxRetries: 3, timeout: 1 })).invoke('Hello'));
		expect(silent.requests).toHaveLength(1);
		// The OpenAI client's timeout or the SDK dispatcher's headers timeout, whichever fires first (both are the option).
		expect(timedOut.message).toMatch(/^The outcome of POST \/v1\/chat\/completions is unknown: (no answer within the timeout \(1 s\)|the connection failed)/);
		expect(timedOut.message).toMatch(/it was not resubmitted\.$/);
		await silent.close();

		const s401 = await serve((_req, res) => sendJson(res, 401, { error: { message: `Incorrect API key provided: ${API_KEY.slice(0, 8)}***` } }));
		const e401 = await failure((await modelFor(s401.url, { maxRetries: 3 })).invoke('Hello'));
		expect(s401.requests).toHaveLength(1);
		expect(e401.message).toBe('POST /v1/chat/completions failed with 401: Incorrect API key provided: sk-wire-***');
		expect(e401.description).toMatch(/Check the API key/);
	});

	it('a refused connection (nothing sent) is retried, then says the service could not be reached', async () => {
		// A port that was free a moment ago: nothing listens there.
		const probe = createServer();
		await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
		const { port } = probe.address() as AddressInfo;
		await new Promise<void>((resolve) => probe.close(() => resolve()));
		const url = `http://127.0.0.1:${port}`;
		const timedFailure = async (maxRetries: number) => {
			const started = Date.now();
			const error = await failure((await modelFor(url, { maxRetries })).invoke('Hello'));
			return { error, ms: Date.now() - started };
		};
		// Without retries it fails at once; with one retry p-retry's backoff (1–2 s) is waited before the second try.
		const once = await timedFailure(0);
		const twice = await timedFailure(1);
		expect(once.ms).toBeLessThan(900);
		expect(twice.ms).toBeGreaterThanOrEqual(950);
		for (const { error } of [once, twice]) {
			expect(error.message).toBe('POST /v1/chat/completions failed: could not reach the service (ECONNREFUSED).');
		}
	});

	it('with the SDK found on n8n 1.x (a copy above n8n on NODE_PATH), the host lacks its half: needs n8n 2.x', async () => {
		const context = supplyContext('http://127.0.0.1:9', {});
		(context as unknown as { helpers: Record<string, unknown> }).helpers = {};
		const error = await failure(new GenGatewayChatModel().supplyData.call(context, 0));
		expect(error.message).toBe(NEEDS_N8N_2);
		expect((error as { description?: string }).description).toMatch(/getSecureEgressFilter is not a function/);
	});

	it('on n8n 2.x any other failure of supplyModel keeps its own message', () => {
		const wrapped = supplyModelFailure(supplyContext('http://127.0.0.1:9', {}), 0, new TypeError('bad model config'));
		expect(wrapped.message).toBe('bad model config');
		expect(wrapped.message).not.toMatch(NEEDS_N8N_2);
	});

	it('without the SDK (n8n 1.x) supplyData says the node needs n8n 2.x', async () => {
		await jest.isolateModulesAsync(async () => {
			jest.doMock('@n8n/ai-node-sdk', () => {
				throw new Error("Cannot find module '@n8n/ai-node-sdk'");
			});
			const { GenGatewayChatModel: Isolated } = await import('../../nodes/GenGatewayChatModel/GenGatewayChatModel.node');
			await expect(new Isolated().supplyData.call(supplyContext('http://127.0.0.1:9', {}), 0)).rejects.toThrow(NEEDS_N8N_2);
		});
	});
});
