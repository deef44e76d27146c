/**
 * Issue 37, points 9–12: the key escapes no more through the ways a hostile server found. Each case runs a node on
 * n8n's real engine against a loopback server of the test's own that sends exactly those bytes, and scans everything
 * the run leaves (its data, the node's error, every n8n log line, binary metadata as stored, what went to n8n's chat,
 * what the Chat Model handed to the agent and n8n recorded) for the random part of the key.
 *
 *  9. A key pasted with trailing whitespace: servers trim it, so they echo the trimmed key.
 * 10. Response headers: a Content-Type echoing the key (the "Not the file" error, mime_type, file_name, the stored
 *     binary's metadata, Image's "is not an image"), a redirect Location whose path holds it (the error, warn logs).
 * 11. The Image node quoting a key-echoing text body (URL, b64_json, data: URL).
 * 12. A key split across two SSE deltas: content, partialContent, n8n's chat, and through the Chat Model the agent.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { IDataObject, IExecuteFunctions, INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { Answer, ScriptedRequest, ScriptedServer } from '../support/scriptedServer';
import { chatModelSupplyContext } from '../support/supplyData';
import type { SupplyRecord } from '../support/supplyData';

jest.setTimeout(60_000);

/** The random part of the key: found anywhere, in any letter case, is a leak. */
const MARK = randomBytes(12).toString('hex');
const KEY = `sk-live-${MARK}`;
const leaked = (text: string) => text.toLowerCase().includes(MARK.toLowerCase());

let server: ScriptedServer | undefined;
async function serve(answer: Answer): Promise<ScriptedServer> {
	server = await startScriptedServer(answer);
	return server;
}
afterEach(async () => {
	await server?.close();
	server = undefined;
});

/** The key as the server received it (servers trim the header value). */
const presented = (req: ScriptedRequest) => String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');

/** Chunks the Chat node sent to n8n's chat (streamingProbe). */
let chunks: Array<{ type: string; content?: unknown }> = [];
beforeEach(() => {
	chunks = [];
});

/** The Chat node as n8n runs it while streaming an execution to a chat: only isStreaming/sendChunk are the test's. */
const streamingProbe: INodeType = (() => {
	const node = new GenGatewayChat();
	return {
		description: { ...node.description, name: 'secretsStreamingProbe' },
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

async function run(nodeSpec: Omit<HarnessNode, 'name' | 'credentials'>, baseUrl: string, apiKey = KEY): Promise<RunResult> {
	return await runWorkflow({
		nodes: [{ name: 'Node', credentials: true, ...nodeSpec }],
		credentials: { baseUrl, apiKey },
		binaryMode: 'filesystem',
		extraNodeTypes: [streamingProbe],
	});
}

/** Where the key was found: the run's data, the node's error, a log line, a stored binary's metadata, n8n's chat. */
async function leaks(result: RunResult): Promise<string[]> {
	const places: Array<[string, unknown]> = [
		['run', result.run],
		['chat chunks', chunks],
		...result.logs.map((line, index): [string, unknown] => [`logs[${index}]`, line]),
	];
	const error = result.nodeError('Node');
	if (error) places.push(['error', { ...error, message: error.message, stack: error.stack }]);
	const binaryData = Container.get(BinaryDataService);
	for (const item of result.output('Node')) {
		for (const [property, binary] of Object.entries(item.binary ?? {})) {
			places.push([`binary ${property}`, binary]);
			if (binary.id) places.push([`binary ${property} metadata`, await binaryData.getMetadata(binary.id)]);
		}
	}
	return places
		.filter(([, thing]) => leaked(typeof thing === 'string' ? thing : JSON.stringify(thing)))
		.map(([where]) => where);
}

async function expectNoLeak(result: RunResult): Promise<void> {
	try {
		expect(await leaks(result)).toEqual([]);
	} finally {
		await result.cleanup();
	}
}

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const models = { type: 'genGatewayModels', parameters: { operation: 'getMany', returnAll: true } };
const chat = (streaming: 'always' | 'never', extra: Partial<HarnessNode> = {}) => ({
	type: 'genGatewayChat',
	parameters: { operation: 'message', model: model('m'), messages: { values: [{ role: 'user', content: 'hi' }] }, options: { streaming } },
	...extra,
});
const responses = (extra: Partial<HarnessNode> = {}) => ({
	type: 'genGatewayChat',
	parameters: { operation: 'response', model: model('m'), input: { values: [{ role: 'user', content: 'hi' }] }, options: { streaming: 'always' } },
	...extra,
});
const image = (options: IDataObject = {}, extra: Partial<HarnessNode> = {}) => ({
	type: 'genGatewayImage',
	parameters: { operation: 'generate', model: model('img-1'), prompt: 'a fox', size: '256x256', options },
	...extra,
});
const download = (extra: Partial<HarnessNode> = {}) => ({
	type: 'genGatewayVideo',
	parameters: { operation: 'download', taskId: 'task_1' },
	...extra,
});

/** An ISO base media file with `ftyp`, `moov` and `mdat` boxes, each one whole. */
function mp4(): Buffer {
	const box = (type: string, payload: Buffer) => {
		const head = Buffer.alloc(8);
		head.writeUInt32BE(payload.length + 8, 0);
		head.write(type, 4, 'latin1');
		return Buffer.concat([head, payload]);
	};
	const ftyp = Buffer.concat([Buffer.from('isom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41', 'latin1')]);
	return Buffer.concat([box('ftyp', ftyp), box('moov', box('mvhd', Buffer.alloc(100))), box('mdat', Buffer.alloc(4096, 7))]);
}

/** A tiny valid PNG (1×1). */
const PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
	'base64',
);

/** The events, then the end of the body (without `data: [DONE]` at the end, a stream that broke). */
function sse(res: ServerResponse, events: string[]): void {
	res.writeHead(200, { 'content-type': 'text/event-stream' });
	for (const event of events) res.write(event);
	res.end();
}
const delta = (content: string) =>
	`data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const DONE = 'data: [DONE]\n\n';
/** The key in two deltas, cut in the middle of its random part. */
const SPLIT = [`Your key is ${KEY.slice(0, 14)}`, `${KEY.slice(14)}, keep it safe.`];

describe('9: a key pasted with trailing whitespace is redacted as the server echoes it (trimmed)', () => {
	const padded = `${KEY} \t `;

	it('Models: a 400 echoing the trimmed key', async () => {
		const s = await serve((req, res) => sendJson(res, 400, { error: { message: `rejected key ${presented(req)}` } }));
		const result = await run(models, s.url, padded);
		expect(s.requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
		expect(result.nodeError('Node')?.message).toBe('GET /v1/models failed with 400: rejected key ***');
		await expectNoLeak(result);
	});

	it('Chat: an answer whose content echoes the trimmed key', async () => {
		const s = await serve((req, res) =>
			sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Your key: ${presented(req)}.` } }] }),
		);
		const result = await run(chat('never'), s.url, padded);
		expect(result.output('Node')[0].json.content).toBe('Your key: ***.');
		await expectNoLeak(result);
	});
});

describe('10: response headers that echo the key reach no message, log line or metadata', () => {
	it('Video Download: a Content-Type echoing the key on a text body ("Not the file")', async () => {
		const s = await serve((req, res) => {
			if (req.path.endsWith('/artifacts')) return sendJson(res, 200, { data: [{ key: 'video' }] });
			res.writeHead(200, { 'content-type': `application/x-${presented(req)}` }).end('no video here, sorry');
		});
		const result = await run(download({ continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toMatch(/^Not the file: artifact "video" of task task_1 answered 200 with text/);
		await expectNoLeak(result);
	});

	it('Video Download: a Content-Type echoing the key on a real mp4 (mime_type, file_name, stored metadata)', async () => {
		const s = await serve((req, res) => {
			if (req.path.endsWith('/artifacts')) return sendJson(res, 200, { data: [{ key: 'video' }] });
			const body = mp4();
			res.writeHead(200, { 'content-type': `video/${presented(req)}`, 'content-length': body.length }).end(body);
		});
		const result = await run(download(), s.url);
		expect(result.error).toBeUndefined();
		// The header is no type to store under: the artifact's default, video/mp4.
		expect(result.output('Node')[0].json).toMatchObject({ mime_type: 'video/mp4', file_name: 'task_1.mp4' });
		expect(result.output('Node')[0].binary?.data).toMatchObject({ mimeType: 'video/mp4', fileName: 'task_1.mp4' });
		await expectNoLeak(result);
	});

	it('Video Download: a redirect Location whose path holds the key, answered 503 then 404 (error, warn log)', async () => {
		const s = await serve((req, res) => {
			if (req.path.endsWith('/artifacts')) return sendJson(res, 200, { data: [{ key: 'video' }] });
			if (req.path.endsWith('/content')) {
				res.writeHead(302, { location: `/files/${presented(req)}/video.mp4` }).end();
				return;
			}
			const tries = s.requests.filter((r) => r.path.startsWith('/files/')).length;
			if (tries === 1) return sendJson(res, 503, { error: { message: 'busy' } });
			sendJson(res, 404, { error: { message: 'gone' } });
		});
		const result = await run(download({ continueOnFail: true }), s.url);
		expect(s.requests.filter((r) => r.path.startsWith('/files/'))).toHaveLength(2);
		expect(String(result.output('Node')[0].json.error)).toMatch(/failed with 404: gone/);
		expect(result.logs.some((line) => /answered 503; retry 2/.test(line))).toBe(true);
		await expectNoLeak(result);
	});

	it('Video Download: a redirect to another host whose path holds the key, answered 503 then 500', async () => {
		const s = await serve((req, res) => {
			if (req.path.endsWith('/artifacts')) return sendJson(res, 200, { data: [{ key: 'video' }] });
			if (req.path.endsWith('/content')) {
				const port = new URL(s.url).port;
				res.writeHead(302, { location: `http://localhost:${port}/files/${presented(req)}/video.mp4` }).end();
				return;
			}
			const tries = s.requests.filter((r) => r.path.startsWith('/files/')).length;
			// The other host got no key: the path holds the one the content endpoint saw.
			if (tries === 1) return sendJson(res, 503, { error: { message: 'busy' } });
			sendJson(res, 500, { error: { message: 'broken' } });
		});
		const result = await run(download({ continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toMatch(/failed with 500: broken/);
		expect(result.logs.some((line) => /answered 503; retry 2/.test(line))).toBe(true);
		await expectNoLeak(result);
	});

	it('Video Download: a redirect Location that is no URL and holds the key (the error quotes it masked)', async () => {
		const s = await serve((req, res) => {
			if (req.path.endsWith('/artifacts')) return sendJson(res, 200, { data: [{ key: 'video' }] });
			res.writeHead(302, { location: `http://[${presented(req)}/video.mp4` }).end();
		});
		const result = await run(download({ continueOnFail: true }), s.url);
		expect(result.output('Node')[0].json).toMatchObject({
			error: 'The content of task task_1 redirected without a usable address',
			errorDescription: 'The service answered 302 with Location "http://[***/video.mp4".',
		});
		await expectNoLeak(result);
	});

	it('Image: a URL answering text under a Content-Type echoing the key ("is not an image")', async () => {
		const s = await serve((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: `${s.url}/img/1.png` }] });
			res.writeHead(200, { 'content-type': `application/x-${s.requests[0] ? presented(s.requests[0]) : ''}` }).end('nothing to see');
		});
		const result = await run(image({}, { continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toMatch(/^Image 1 is not an image: its URL answered 200 with text/);
		await expectNoLeak(result);
	});

	it('Image: unknown bytes under an image Content-Type echoing the key: no image type to trust, so not stored as one', async () => {
		// Before: stored, with the key as its MIME type (the output, the binary's metadata).
		const s = await serve((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: `${s.url}/img/1` }] });
			res.writeHead(200, { 'content-type': `image/x-${presented(s.requests[0])}` }).end(Buffer.from([1, 2, 3, 4, 5, 6, 0, 0, 0xfe, 0xff, 9, 8]));
		});
		const result = await run(image({}, { continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toBe('Image 1 is not an image: its URL answered 200 with 12 bytes of an unknown binary type (starting 01 02 03 04 05 06 00 00)');
		await expectNoLeak(result);
	});

	it('Image: a PNG under a Content-Type echoing the key is stored as the PNG it is', async () => {
		const s = await serve((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: `${s.url}/img/1` }] });
			res.writeHead(200, { 'content-type': `image/x-${presented(s.requests[0])}` }).end(PNG);
		});
		const result = await run(image(), s.url);
		expect(result.error).toBeUndefined();
		expect(result.output('Node')[0].binary?.data).toMatchObject({ mimeType: 'image/png', fileName: 'image-1.png' });
		await expectNoLeak(result);
	});
});

describe('11: the Image node never quotes a key-echoing body', () => {
	it('URL: the image URL answers a text page naming the key', async () => {
		const s = await serve((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: `${s.url}/img/1.png` }] });
			res.writeHead(200, { 'content-type': 'text/plain' }).end(`no image for key ${presented(s.requests[0])}`);
		});
		const result = await run(image({}, { continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toBe('Image 1 is not an image: its URL answered 200 with text: "no image for key ***" (Content-Type text/plain)');
		await expectNoLeak(result);
	});

	it('b64_json: decodes to a message naming the key', async () => {
		const s = await serve((req, res) =>
			sendJson(res, 200, { created: 1, data: [{ b64_json: Buffer.from(`denied: ${presented(req)} has no image quota`).toString('base64') }] }),
		);
		const result = await run(image({ responseFormat: 'b64_json' }, { continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toBe('Image 1 is not an image: its b64_json decodes to text: "denied: *** has no image quota"');
		await expectNoLeak(result);
	});

	it('data: URL: holds a message naming the key', async () => {
		const s = await serve((req, res) =>
			sendJson(res, 200, { created: 1, data: [{ url: `data:text/plain;base64,${Buffer.from(`for ${presented(req)}`).toString('base64')}` }] }),
		);
		const result = await run(image({}, { continueOnFail: true }), s.url);
		expect(String(result.output('Node')[0].json.error)).toMatch(/^Image 1 is not an image: its data: URL holds text: "for \*\*\*"/);
		await expectNoLeak(result);
	});
});

describe('12: a key split across two SSE deltas', () => {
	it('Chat: the assembled content', async () => {
		const s = await serve((_req, res) => sse(res, [delta(SPLIT[0]), delta(SPLIT[1]), DONE]));
		const result = await run(chat('always'), s.url);
		expect(result.output('Node')[0].json.content).toBe('Your key is ***, keep it safe.');
		await expectNoLeak(result);
	});

	it('Chat: partialContent of a stream that ends after the two deltas, without [DONE]', async () => {
		const s = await serve((_req, res) => sse(res, [delta(SPLIT[0]), delta(SPLIT[1])]));
		const result = await run(chat('always', { continueOnFail: true }), s.url);
		expect(result.output('Node')[0].json.partialContent).toBe('Your key is ***, keep it safe.');
		await expectNoLeak(result);
	});

	it('Chat: the text forwarded to n8n\'s chat, piece by piece', async () => {
		const s = await serve((_req, res) => sse(res, [delta('Hello. '), delta(SPLIT[0]), delta(SPLIT[1]), delta(' Bye.'), DONE]));
		const result = await run({ ...chat('always'), type: 'secretsStreamingProbe' }, s.url);
		const forwarded = chunks.filter((c) => c.type === 'item').map((c) => String(c.content)).join('');
		expect(forwarded).toBe('Hello. Your key is ***, keep it safe. Bye.');
		expect(result.output('Node')[0].json.content).toBe(forwarded);
		await expectNoLeak(result);
	});

	it('Chat: a key split in three deltas of the Responses API (no terminal event: the response built from them)', async () => {
		const frame = (type: string, data: IDataObject) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
		const s = await serve((_req, res) =>
			sse(res, [
				frame('response.output_text.delta', { delta: `key ${KEY.slice(0, 10)}` }),
				frame('response.output_text.delta', { delta: KEY.slice(10, 20) }),
				frame('response.output_text.delta', { delta: `${KEY.slice(20)} end` }),
				DONE,
			]),
		);
		const result = await run(responses(), s.url);
		expect(JSON.stringify(result.output('Node')[0].json)).toContain('key *** end');
		await expectNoLeak(result);
	});

	describe('through the Chat Model: what the agent gets and n8n records', () => {
		let record: SupplyRecord = { outputs: [], aiEvents: [] };
		interface Model {
			stream(input: unknown): Promise<AsyncIterable<{ content: unknown; tool_calls?: unknown[]; concat(other: unknown): unknown }>>;
			bindTools(tools: unknown[]): Model;
		}
		async function modelFor(baseUrl: string): Promise<Model> {
			const supply = chatModelSupplyContext({ baseUrl, apiKey: KEY, parameters: { model: model('gpt-4o-mini'), options: {} } });
			record = supply.record;
			return (await new GenGatewayChatModel().supplyData.call(supply.ctx, 0)).response as Model;
		}
		const chunk = (deltaPart: IDataObject, finish: string | null = null) =>
			`data: ${JSON.stringify({ id: 'cc', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: deltaPart, finish_reason: finish }] })}\n\n`;
		const text = (content: unknown) =>
			typeof content === 'string' ? content : (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
		const seen = (thing: unknown) => {
			const visited = new WeakSet<object>();
			return JSON.stringify(thing, (_key, value: unknown) => {
				if (value && typeof value === 'object') {
					if (visited.has(value)) return undefined;
					visited.add(value);
				}
				return value instanceof Error ? { ...value, message: value.message, stack: value.stack } : value;
			});
		};

		it('streamed text and tool-call arguments: the message the agent assembles, n8n\'s recorded output', async () => {
			const s = await serve((_req, res) =>
				sse(res, [
					chunk({ role: 'assistant', content: SPLIT[0] }),
					chunk({ content: SPLIT[1] }),
					chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'Echo', arguments: `{"text":"${KEY.slice(0, 12)}` } }] }),
					chunk({ tool_calls: [{ index: 0, function: { arguments: `${KEY.slice(12)}"}` } }] }),
					chunk({}, 'tool_calls'),
					DONE,
				]),
			);
			const tool = { type: 'function', function: { name: 'Echo', description: 'Echoes', parameters: { type: 'object', properties: { text: { type: 'string' } } } } };
			const bound = (await modelFor(s.url)).bindTools([tool]);
			let message: { content: unknown; tool_calls?: unknown[]; concat(other: unknown): unknown } | undefined;
			const pieces: string[] = [];
			for await (const piece of await bound.stream('Tell me the key')) {
				pieces.push(text(piece.content));
				message = message ? (message.concat(piece) as typeof piece) : piece;
			}
			expect(pieces.join('')).toBe('Your key is ***, keep it safe.');
			expect(message?.tool_calls).toEqual([expect.objectContaining({ name: 'Echo', args: { text: '***' } })]);
			expect(leaked(seen({ pieces, message, record }))).toBe(false);
			expect(record.outputs.length + record.aiEvents.length).toBeGreaterThan(0);
		});

		it('a stream that ends after the two deltas, without [DONE]: the error\'s partialContent', async () => {
			const s = await serve((_req, res) => sse(res, [chunk({ role: 'assistant', content: SPLIT[0] }), chunk({ content: SPLIT[1] })]));
			const pieces: string[] = [];
			const error = await (async () => {
				for await (const piece of await (await modelFor(s.url)).stream('Tell me the key')) pieces.push(text(piece.content));
			})().then(
				() => undefined,
				(caught: unknown) => caught as Error & { context?: IDataObject },
			);
			expect(error?.context?.partialContent).toBe('Your key is ***, keep it safe.');
			expect(leaked(seen({ pieces, error, message: error?.message, record }))).toBe(false);
		});
	});

	// Found by an adversarial review: each part was masked alone, then the reply joined them.
	it.each([['output_text'], ['refusal']])('Responses: the key split across two %s parts of one answer, streamed or not', async (kind) => {
		const field = kind === 'output_text' ? 'text' : 'refusal';
		const answer = {
			id: 'resp_1', object: 'response', status: 'completed', model: 'm',
			output: [{ type: 'message', id: 'msg_1', role: 'assistant', content: SPLIT.map((part) => ({ type: kind, [field]: part })) }],
		};
		const frame = (type: string, data: IDataObject) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
		const whole = await serve((_req, res) => sendJson(res, 200, answer));
		const plain = await run({ ...responses(), parameters: { ...responses().parameters, options: { streaming: 'never' } } }, whole.url);
		expect(plain.output('Node')[0].json[kind === 'output_text' ? 'content' : 'refusal']).toBe('Your key is ***, keep it safe.');
		await expectNoLeak(plain);
		// afterEach closes the last server served: this one closes here (left open, it kept a --runInBand jest alive).
		await whole.close();
		const streamed = await serve((_req, res) => sse(res, [frame('response.completed', { response: answer })]));
		await expectNoLeak(await run(responses(), streamed.url));
	});
});
