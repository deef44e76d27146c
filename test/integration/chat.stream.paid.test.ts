/**
 * Issue 28's streams: an answer the service has begun to stream is a paid call, whatever error follows (an
 * `event: error`, a Responses `response.failed`, an event that never ends): n8n's Retry On Fail must not send the
 * POST again, and the error keeps the text that arrived. Also the bytes new-api really sends (`: PING` comments
 * between frames, a last usage chunk with `"choices": []`). Chat through n8n's engine against loopback servers of
 * the test's own.
 * Before the fix 9 of these 10 failed: 3 POSTs under Retry On Fail for each error event, and the endless event was
 * read whole (40 MiB); new-api's stream was already read right (its test guards it).
 */
import type { ServerResponse } from 'http';
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import { postsTo, startScriptedServer } from '../support/scriptedServer';
import type { Answer, ScriptedServer } from '../support/scriptedServer';

const API_KEY = 'sentinel-key-paidstream-4b2c';
const RETRY = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1 };

jest.setTimeout(60_000);

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const chat = (options: IDataObject = {}) => ({
	operation: 'message',
	model: model('m'),
	messages: { values: [{ role: 'user', content: 'hi' }] },
	options: { streaming: 'always', ...options },
});
const responses = (options: IDataObject = {}) => ({
	operation: 'response',
	model: model('m'),
	input: { values: [{ role: 'user', content: 'hi' }] },
	options: { streaming: 'always', ...options },
});

const sseHead = (res: ServerResponse) =>
	res.writeHead(200, { 'Content-Type': 'text/event-stream', 'X-Accel-Buffering': 'no' });
const frame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const delta = (content: string) =>
	frame({
		id: 'chatcmpl-1',
		object: 'chat.completion.chunk',
		created: 1,
		model: 'm',
		choices: [{ index: 0, delta: { content }, finish_reason: null }],
	});
const textDelta = (text: string) =>
	`event: response.output_text.delta\n${frame({ type: 'response.output_text.delta', delta: text })}`;

async function withServer(answer: Answer, test: (server: ScriptedServer) => Promise<void>): Promise<void> {
	const server = await startScriptedServer(answer);
	try {
		await test(server);
	} finally {
		await server.close();
	}
}

async function run(server: ScriptedServer, parameters: IDataObject, node: IDataObject = {}): Promise<RunResult> {
	return await runWorkflow({
		nodes: [{ name: 'Node', type: 'genGatewayChat', parameters, credentials: true, ...node }],
		credentials: { baseUrl: server.url, apiKey: API_KEY },
	});
}

type NodeErrorShape = Error & { description?: string; context?: IDataObject };

const PAID_CASES: Array<[string, IDataObject, string, string, string]> = [
	[
		'chat: 200, some content, then event: error',
		chat(),
		'/v1/chat/completions',
		`${delta('Hel')}${delta('lo')}event: error\ndata: {"message":"Upstream overloaded","code":"server_error"}\n\n`,
		'Upstream overloaded',
	],
	[
		'chat: 200, some content, then data: {"error": …} and [DONE]',
		chat(),
		'/v1/chat/completions',
		`${delta('Hel')}${delta('lo')}data: {"error":{"message":"Upstream overloaded"}}\n\ndata: [DONE]\n\n`,
		'Upstream overloaded',
	],
	[
		'responses: 200, some content, then response.failed',
		responses(),
		'/v1/responses',
		`${textDelta('Hel')}${textDelta('lo')}event: response.failed\n${frame({
			type: 'response.failed',
			response: { id: 'r1', status: 'failed', error: { code: 'server_error', message: 'Model overloaded' } },
		})}`,
		'Model overloaded',
	],
];

describe('a stream that began and then failed is paid: Retry On Fail sends the POST once', () => {
	it.each(PAID_CASES)('%s: 3 tries, 1 POST, partialContent kept', async (_name, parameters, path, body, said) => {
		await withServer(
			(_req, res) => {
				sseHead(res);
				res.end(body);
			},
			async (server) => {
				const result = await run(server, parameters, RETRY);
				expect(result.tries('Node')).toBe(3);
				expect(postsTo(server, path)).toHaveLength(1);
				const error = result.nodeError('Node') as NodeErrorShape;
				expect(error.message).toMatch(/^Not resubmitted: an earlier try of this item/);
				expect(error.message).toContain(`POST ${path} failed while streaming: ${said}`);
				expect(error.context?.partialContent).toBe('Hello');
				expect(error.context?.outcomeUnknown).toBe(true);
			},
		);
	});

	it.each(PAID_CASES)('%s: the first error says the call is paid and was not resent', async (_n, parameters, path, body, said) => {
		await withServer(
			(_req, res) => {
				sseHead(res);
				res.end(body);
			},
			async (server) => {
				const result = await run(server, parameters, { continueOnFail: true });
				expect(postsTo(server, path)).toHaveLength(1);
				const item = result.output()[0].json;
				expect(item.error).toBe(`POST ${path} failed while streaming: ${said}`);
				expect(item.partialContent).toBe('Hello');
				expect(item.errorDescription).toMatch(/had begun to answer/);
				expect(item.errorDescription).toMatch(/counts as paid and was not resent/);
			},
		);
	});

	it('Continue On Fail with Retry On Fail: the error item is retried without a second POST, partialContent kept', async () => {
		await withServer(
			(_req, res) => {
				sseHead(res);
				res.end(`${delta('Hel')}${delta('lo')}event: error\ndata: {"message":"Upstream overloaded"}\n\n`);
			},
			async (server) => {
				const result = await run(server, chat(), { ...RETRY, continueOnFail: true });
				// n8n retries a node whose first output item holds json.error.
				expect(result.tries('Node')).toBe(3);
				expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
				const item = result.output()[0].json;
				expect(item.error).toMatch(/^Not resubmitted: .*failed while streaming: Upstream overloaded/);
				expect(item.partialContent).toBe('Hello');
			},
		);
	});

	it('an error event before any text: the stream began (200, event stream), so it counts as paid too', async () => {
		await withServer(
			(_req, res) => {
				sseHead(res);
				res.end('event: error\ndata: {"message":"Upstream overloaded"}\n\n');
			},
			async (server) => {
				const result = await run(server, chat(), RETRY);
				expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
				const error = result.nodeError('Node') as NodeErrorShape;
				expect(error.message).toMatch(/^Not resubmitted/);
				expect(error.context?.partialContent).toBe('');
			},
		);
	});
});

const MiB = 1024 * 1024;

describe('one event whose data never ends is cut at 8 MiB', () => {
	it('the error says so, the socket is closed, the text so far is kept and nothing is resent', async () => {
		let written = 0;
		let closedEarly = false;
		await withServer(
			async (_req, res) => {
				sseHead(res);
				res.write(`${delta('Hel')}${delta('lo')}data: {"choices":[{"index":0,"delta":{"content":"`);
				res.on('close', () => {
					if (!res.writableEnded) closedEarly = true;
				});
				const piece = 'a'.repeat(64 * 1024);
				// Up to 40 MiB of one data line, never ending it; stops when the client hangs up.
				while (written < 40 * MiB && !res.destroyed) {
					written += piece.length;
					if (!res.write(piece)) {
						await new Promise<void>((resolve) => {
							res.once('drain', resolve);
							res.once('close', resolve);
						});
					}
				}
				if (!res.destroyed) res.end('"}}]}\n\n');
			},
			async (server) => {
				const result = await run(server, chat(), RETRY);
				expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
				const error = result.nodeError('Node') as NodeErrorShape;
				expect(error.message).toMatch(/^Not resubmitted/);
				expect(error.message).toMatch(/an event grew past 8 MiB without ending/);
				expect(error.context?.partialContent).toBe('Hello');
				expect(error.context?.outcomeUnknown).toBe(true);
				for (let i = 0; i < 100 && !closedEarly; i++) await new Promise((resolve) => setTimeout(resolve, 10));
				expect(closedEarly).toBe(true);
				// 8 MiB read, plus what the socket buffers held when the node hung up.
				expect(written).toBeLessThan(24 * MiB);
			},
		);
	});
});

describe("new-api's stream: `: PING` comments between frames and a last usage chunk with choices []", () => {
	const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
	const newApiStream = [
		': PING\n\n',
		frame({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'm', system_fingerprint: null,
			choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
		': PING\n\n',
		delta('Hel'),
		': PING\n\n: PING\n\n',
		delta('lo'),
		frame({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'm',
			choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
		': PING\n\n',
		frame({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'm', system_fingerprint: null,
			choices: [], usage }),
		'data: [DONE]\n\n',
	];

	it('are read as one whole answer with its usage, in one POST', async () => {
		await withServer(
			async (_req, res) => {
				sseHead(res);
				// One frame per write, as new-api flushes them.
				for (const piece of newApiStream) {
					res.write(piece);
					await new Promise((resolve) => setTimeout(resolve, 5));
				}
				res.end();
			},
			async (server) => {
				const result = await run(server, chat(), RETRY);
				expect(result.error).toBeUndefined();
				expect(result.tries('Node')).toBe(1);
				expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
				expect(result.output()[0].json).toEqual({
					content: 'Hello',
					role: 'assistant',
					finish_reason: 'stop',
					usage,
					model: 'm',
				});
			},
		);
	});
});
