// Gen Gateway Chat Model's model (what supplyData gives the AI Agent: our own BaseChatModel of @n8n/ai-node-sdk,
// wrapped by the SDK's supplyModel for LangChain, its HTTP on the package's transport) driven through n8n-core's real
// SupplyDataContext against a loopback server of the test's own that sends the bytes OpenAI-format services send:
// tool-call deltas split across chunks, a usage chunk, [DONE], an error event (with the key in it), a 429 with and
// without Retry-After, a stream cut before [DONE], a reset, a 200 error body; and the money rule: an unknown outcome
// (dropped after the request arrived, a 500, a timeout, a broken stream) is sent exactly once, also across the root
// node's Retry On Fail, while a 429 or a refused connection is retried. Each case counts the POSTs.
// Until issue 31 the model was the SDK's OpenAI client (supplyModel({ type: 'openai' })); where an assertion was about
// that client's own words or backoff, it now asserts the transport's (the Chat node's), and says so.
// Time: about 25 s (a 429's Retry-After of 3 s is really waited; n8n-core and the SDK load once).
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { passthroughEgressFilter } from '@n8n/backend-network/egress';
import type { INode, ISupplyDataFunctions } from 'n8n-workflow';

import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { NEEDS_N8N_2, supplyModelFailure } from '../../nodes/GenGatewayChatModel/sdkHost';
import { pacerOf } from '../../nodes/shared/transport/pacer';
import { postsTo, resetConnection, sendJson, startScriptedServer, type Answer, type ScriptedServer } from '../support/scriptedServer';
import { chatModelSupplyContext, type SupplyRecord } from '../support/supplyData';

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
	invoke(input: unknown): Promise<{ content: unknown; text: string; tool_calls?: unknown[]; usage_metadata?: unknown }>;
	stream(input: unknown): Promise<AsyncIterable<{ content: unknown; tool_calls?: unknown[]; usage_metadata?: unknown; concat(other: unknown): unknown }>>;
	bindTools(tools: unknown[]): Model;
}

/** A bare ISupplyDataFunctions (for the n8n 1.x cases: its helpers can be emptied to look like 1.x). */
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

/** What n8n stored and logged for the sub-node in the last modelFor (its output data and AI events). */
let record: SupplyRecord = { outputs: [], aiEvents: [] };
/** What the transport logged as warnings since the last modelFor (n8n's logger, spied on). */
let warnings: jest.SpyInstance | undefined;
const retriesLogged = () =>
	(warnings?.mock.calls ?? []).filter(([message]) => /; retry \d+ in \d+ ms$/.test(String(message))).length;

/** supplyData on n8n-core's real supply context; `executionId` and `credential` name the run and the pace's key. */
async function modelFor(
	baseUrl: string,
	options: Record<string, unknown> = {},
	run: { executionId?: string; credential?: { id: string; name: string } } = {},
): Promise<Model> {
	const supply = chatModelSupplyContext({
		baseUrl,
		apiKey: API_KEY,
		parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options },
		...run,
	});
	record = supply.record;
	// The transport logs each retry it makes ("… failed (ECONNREFUSED); retry 2 in 312 ms"): counted, not timed.
	warnings = jest.spyOn(supply.ctx.logger, 'warn');
	warnings.mockClear();
	const supplied = await new GenGatewayChatModel().supplyData.call(supply.ctx, 0);
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
		// The SDK's adapter gives content blocks (the OpenAI client gave a string): the answer's text is the same.
		expect(answer.text).toBe('Hello after waiting');
		expect(s.requests).toHaveLength(2);
		// The transport's own first backoff for a 429 is 0.25–0.5 s: only the Retry-After makes it 3 s.
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
		// The Chat node's words for a paid POST answered 500 (the transport's), no longer our SDK handler's.
		expect(e500.message).toBe(
			'The outcome of POST /v1/chat/completions is unknown: the service answered 500 (Internal error after ' +
				'accepting), which does not say whether it created the work. The service may have accepted it (and may ' +
				'charge for it), so it was not resubmitted.',
		);
		expect(e500.description).toMatch(/resubmitting blindly can pay for the same work twice/);
		await s500.close();

		const silent = await serve(() => undefined); // reads the request, never answers
		const timedOut = await failure((await modelFor(silent.url, { maxRetries: 3, timeout: 1 })).invoke('Hello'));
		expect(silent.requests).toHaveLength(1);
		// The transport's request timeout (the option), in the Chat node's words.
		expect(timedOut.message).toMatch(/^The outcome of POST \/v1\/chat\/completions is unknown: no answer within 1 s \(its timeout ran out\)/);
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
			return { error, ms: Date.now() - started, retries: retriesLogged() };
		};
		// Without retries it fails after one try; with one retry the transport's backoff (0.25–0.5 s; p-retry's was 1–2
		// s) is waited before the second. Counted from the transport's log, and the wait as a lower bound (a busy
		// machine only adds to it).
		const once = await timedFailure(0);
		const twice = await timedFailure(1);
		expect([once.retries, twice.retries]).toEqual([0, 1]);
		expect(twice.ms).toBeGreaterThanOrEqual(245);
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
		// The mock outlives the isolated registry: the tests after this one load the real SDK again.
		jest.dontMock('@n8n/ai-node-sdk');
	});
});

/** Every place the key could end up after a failed call: the error (all of it), n8n's stored output, the AI events. */
function expectKeyNowhere(error: unknown): void {
	const seen = new WeakSet<object>();
	const text = JSON.stringify({ error, message: (error as Error)?.message, description: (error as { description?: unknown })?.description, record }, (_key, value: unknown) => {
		if (value && typeof value === 'object') {
			if (seen.has(value)) return undefined;
			seen.add(value);
		}
		return value instanceof Error ? { ...value, message: value.message, stack: value.stack } : value;
	});
	expect(text).not.toMatch(new RegExp(API_KEY, 'i'));
	expect(record.outputs.length + record.aiEvents.length).toBeGreaterThan(0);
}

async function caught(promise: Promise<unknown>): Promise<Error & { description?: string; context?: Record<string, unknown> }> {
	return (await promise.then(
		() => {
			throw new Error('expected the call to fail');
		},
		(error: unknown) => error,
	)) as Error & { description?: string; context?: Record<string, unknown> };
}

async function streamAll(model: Model, input: unknown): Promise<string> {
	let text = '';
	for await (const piece of await model.stream(input)) {
		const content = piece.content;
		text += typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
	}
	return text;
}

const COMPLETIONS = '/v1/chat/completions';

describe('Gen Gateway Chat Model on the package transport (issue 31)', () => {
	it('streamed: two tool calls split across chunks, text before them, usage with "choices": [] before [DONE]; 1 POST', async () => {
		const s = await serve((_req, res) =>
			sse(res, [
				chunk({ role: 'assistant', content: 'Making ' }),
				chunk({ content: 'two clips.' }),
				chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'Generate_Video', arguments: '{"prom' } }] }),
				chunk({ tool_calls: [{ index: 0, function: { arguments: 'pt":"a fox"}' } }] }),
				chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'Generate_Video', arguments: '' } }] }),
				chunk({ tool_calls: [{ index: 1, function: { arguments: '{"prompt":"a ' } }] }),
				chunk({ tool_calls: [{ index: 1, function: { arguments: 'cat","duration":4}' } }] }),
				chunk({}, 'tool_calls'),
				{ ...chunk({}), choices: [], usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 } },
				'[DONE]',
			]),
		);
		const model = (await modelFor(s.url)).bindTools([VIDEO_TOOL]);
		let message: { tool_calls?: unknown[]; usage_metadata?: unknown; text?: string; concat(other: unknown): unknown } | undefined;
		for await (const piece of await model.stream('Two clips')) message = message ? (message.concat(piece) as typeof piece) : piece;
		expect(message?.text).toBe('Making two clips.');
		expect(message?.tool_calls).toEqual([
			{ name: 'Generate_Video', args: { prompt: 'a fox' }, id: 'call_a', type: 'tool_call' },
			{ name: 'Generate_Video', args: { prompt: 'a cat', duration: 4 }, id: 'call_b', type: 'tool_call' },
		]);
		expect(message?.usage_metadata).toMatchObject({ input_tokens: 30, output_tokens: 20, total_tokens: 50 });
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
		expect(bodies(s)[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
	});

	it('a tool result goes back: the assistant\'s tool call and the tool message, as OpenAI-format messages', async () => {
		const s = await serve((_req, res) =>
			sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Done: task_1' } }] }),
		);
		const model = (await modelFor(s.url)).bindTools([VIDEO_TOOL]);
		const { AIMessage, HumanMessage, ToolMessage } = await import('@langchain/core/messages');
		const answer = await model.invoke([
			new HumanMessage('A boat'),
			new AIMessage({ content: '', tool_calls: [{ id: 'call_9', name: 'Generate_Video', args: { prompt: 'a boat' } }] }),
			new ToolMessage({ content: '{"taskId":"task_1"}', tool_call_id: 'call_9' }),
		]);
		expect(answer.text).toBe('Done: task_1');
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
		expect(bodies(s)[0].messages).toEqual([
			{ role: 'user', content: 'A boat' },
			{ role: 'assistant', content: '', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'Generate_Video', arguments: '{"prompt":"a boat"}' } }] },
			{ role: 'tool', tool_call_id: 'call_9', content: '{"taskId":"task_1"}' },
		]);
	});

	it('an error event whose message echoes the key: the service\'s words with the key masked, nowhere the key; 1 POST', async () => {
		const s = await serve((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Partial' }))}\n\n`);
			res.write(`event: error\ndata: ${JSON.stringify({ error: { message: `Quota exceeded for key ${API_KEY}`, type: 'quota' } })}\n\n`);
			res.end();
		});
		const error = await caught(streamAll(await modelFor(s.url), 'Hello'));
		expect(error.message).toBe('POST /v1/chat/completions failed while streaming: Quota exceeded for key ***');
		expect(error.description).toMatch(/counts as paid and was not resent/);
		expect(error.context?.partialContent).toBe('Partial');
		expectKeyNowhere(error);
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
	});

	it('429s whose message echoes the key, retried until Maximum Retries: the hint, nowhere the key; 3 POSTs', async () => {
		const s = await serve((_req, res) =>
			sendJson(res, 429, { error: { message: `Rate limit for ${API_KEY} reached` } }, { 'retry-after': '0' }),
		);
		const error = await caught((await modelFor(s.url, { maxRetries: 2 })).invoke('Hello'));
		expect(error.message).toBe('POST /v1/chat/completions failed with 429: Rate limit for *** reached');
		expect(error.description).toMatch(/^Rate limit exceeded/);
		expectKeyNowhere(error);
		expect(postsTo(s, COMPLETIONS)).toHaveLength(3);
	});

	it('a 429 without Retry-After: the transport\'s backoff, the credential\'s pace learns it, then the answer; 2 POSTs', async () => {
		const s = await serve((_req, res, index) => {
			if (index === 0) return sendJson(res, 429, { error: { message: 'Too many requests' } });
			sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hi' } }] });
		});
		const executionId = `cm-429-${process.pid}`;
		const credential = { id: `cm-429-cred-${process.pid}`, name: 'Gen Gateway account' };
		const answer = await (await modelFor(s.url, {}, { executionId, credential })).invoke('Hello');
		expect(answer.text).toBe('Hi');
		expect(postsTo(s, COMPLETIONS)).toHaveLength(2);
		// The 429 went into this execution's pacer on the credential's shared pace (pacer.ts): the rate is now bounded.
		const pacer = pacerOf(executionId, credential.id);
		expect(pacer.stats.limited).toBe(1);
		expect(pacer.rate).toBeLessThan(Infinity);
	});

	it('a stream closed cleanly without [DONE] is incomplete: an error with the partial text, not an answer; 1 POST', async () => {
		const s = await serve((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Partial ans' }))}\n\n`);
			res.end();
		});
		const error = await caught(streamAll(await modelFor(s.url, { maxRetries: 3 }), 'Hello'));
		expect(error.message).toMatch(/^The stream of POST \/v1\/chat\/completions broke before it was complete \(the connection closed before data: \[DONE\]\)/);
		expect(error.context?.partialContent).toBe('Partial ans');
		expect(error.context?.outcomeUnknown).toBe(true);
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
	});

	it('a stream reset after it began: an unknown outcome (a broken stream), never resent; 1 POST', async () => {
		const s = await serve((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Half' }))}\n\n`);
			setImmediate(() => res.socket?.destroy());
		});
		const error = await caught(streamAll(await modelFor(s.url, { maxRetries: 3 }), 'Hello'));
		expect(error.message).toMatch(/^The stream of POST \/v1\/chat\/completions broke before it was complete/);
		expect(error.message).toMatch(/so the request was not resent\.$/);
		expect(error.context?.outcomeUnknown).toBe(true);
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
	});

	it('a 200 whose body is {"error": …}: the service\'s error with its words, streamed or not; 1 POST each', async () => {
		const s = await serve((_req, res) => sendJson(res, 200, { error: { message: 'Model gpt-x does not exist', type: 'invalid_request_error' } }));
		const plain = await caught((await modelFor(s.url)).invoke('Hello'));
		expect(plain.message).toBe('POST /v1/chat/completions failed: Model gpt-x does not exist');
		expect(plain.description).toMatch(/HTTP 200 with an "error" body/);
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
		// Asked to stream, the same JSON body (the service ignored `stream`): the same error.
		const streamed = await caught(streamAll(await modelFor(s.url), 'Hello'));
		expect(streamed.message).toBe('POST /v1/chat/completions failed: Model gpt-x does not exist');
		expect(postsTo(s, COMPLETIONS)).toHaveLength(2);
	});

	it('across the root node\'s Retry On Fail: a 500 (unknown outcome) is one POST, the tries after it are refused', async () => {
		const s = await serve((_req, res) => sendJson(res, 500, { error: { message: 'Internal error after accepting' } }));
		// Each try of the root node calls supplyData again on a new context of the same execution and run, and its
		// system message holds `{{ $now }}`: the body differs on every try, the call is the same (the try's first).
		const executionId = `cm-retry-on-fail-${process.pid}`;
		const ask = (attempt: number) => [['system', `Today is ${Date.now() + attempt}`], ['human', 'Hello']];
		const tries: Error[] = [];
		for (let attempt = 0; attempt < 3; attempt++) {
			tries.push(await caught((await modelFor(s.url, {}, { executionId })).invoke(ask(attempt))));
		}
		expect(postsTo(s, COMPLETIONS)).toHaveLength(1);
		expect(tries[0].message).toMatch(/^The outcome of POST \/v1\/chat\/completions is unknown/);
		for (const again of tries.slice(1)) {
			expect(again.message).toMatch(/^Not resubmitted: an earlier try of this item in this execution had an unknown outcome/);
		}
		// The model's next call in a try (an agent's next step) is another request: not held back.
		const model = await modelFor(s.url, {}, { executionId: `${executionId}-b` });
		await caught(model.invoke('Hello'));
		await caught(model.invoke('Something else'));
		expect(postsTo(s, COMPLETIONS)).toHaveLength(3);
	});
});
