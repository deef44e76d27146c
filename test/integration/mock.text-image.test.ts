/** Chat completions, responses (plain and streamed) and image generation on the mock. */
import { createHash } from 'crypto';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { rawRequest } from '../mock/rawRequest';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess();
});
afterAll(() => mock?.stop());
beforeEach(() => mock.reset());

const auth = () => ({ Authorization: `Bearer ${mock.apiKey}` });
const post = async (path: string, body: unknown) => {
	const res = await rawRequest(`${mock.url}${path}`, { headers: auth(), body });
	return { ...res, text: res.body.toString() };
};
const json = (res: { text: string }) => JSON.parse(res.text);
const dataLines = (text: string) =>
	text
		.split('\n')
		.filter((l) => l.startsWith('data: '))
		.map((l) => l.slice(6));

describe('chat completions', () => {
	const messages = [
		{ role: 'system', content: 'be brief' },
		{ role: 'user', content: 'first question' },
		{ role: 'assistant', content: 'ok' },
		{ role: 'user', content: [{ type: 'text', text: 'hello there world' }] },
	];

	it('echoes the last user message with usage', async () => {
		const res = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages, temperature: 0.2 });
		expect(res.status).toBe(200);
		const body = json(res);
		expect(body).toMatchObject({
			object: 'chat.completion',
			model: 'gpt-4o-mini',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello there world' }, finish_reason: 'stop' }],
			usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
		});
	});

	it('answers a JSON string in json_object mode and cuts at max_tokens', async () => {
		const asJson = json(await post('/v1/chat/completions', { model: 'gk-chat-1', messages, response_format: { type: 'json_object' } }));
		expect(JSON.parse(asJson.choices[0].message.content)).toEqual({ echo: 'hello there world' });
		const short = json(await post('/v1/chat/completions', { model: 'gk-chat-1', messages, max_tokens: 2 }));
		expect(short.choices[0]).toMatchObject({ message: { content: 'Echo: hello' }, finish_reason: 'length' });
	});

	it('rejects unknown models and bad bodies with 400 error.message', async () => {
		const unknown = await post('/v1/chat/completions', { model: 'sd_2.0_discount', messages });
		expect(unknown.status).toBe(400);
		expect(json(unknown).error.message).toMatch(/^model: /);
		const empty = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [] });
		expect(empty.status).toBe(400);
		expect(json(empty).error.message).toMatch(/^messages: /);
		const broken = await rawRequest(`${mock.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { ...auth(), 'Content-Type': 'application/json' },
			body: undefined,
		});
		expect(broken.status).toBe(400);
	});

	it('streams SSE chunks: role first, several content deltas, finish_reason + usage, then [DONE]', async () => {
		const res = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages, stream: true });
		expect(res.headers['content-type']).toMatch(/text\/event-stream/);
		const lines = dataLines(res.text);
		expect(lines[lines.length - 1]).toBe('[DONE]');
		expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
		const chunks = lines.slice(0, -1).map((l) => JSON.parse(l));
		expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
		expect(chunks[0].choices[0].delta.role).toBe('assistant');
		const contents = chunks.map((c) => c.choices[0].delta.content ?? '').filter(Boolean);
		expect(contents.length).toBeGreaterThan(2);
		expect(contents.join('')).toBe('Echo: hello there world');
		const last = chunks[chunks.length - 1];
		expect(last.choices[0].finish_reason).toBe('stop');
		expect(last.usage.total_tokens).toBe(12);
	});
});

describe('responses', () => {
	it('answers output message, output_text and usage for a string input', async () => {
		const body = json(await post('/v1/responses', { model: 'gpt-4o-mini', input: 'tell me', instructions: 'be nice' }));
		expect(body).toMatchObject({
			object: 'response',
			status: 'completed',
			output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Echo: tell me' }] }],
			output_text: 'Echo: tell me',
			usage: { input_tokens: 4, output_tokens: 3, total_tokens: 7 },
		});
	});

	it('takes the last user item of an array input', async () => {
		const input = [
			{ role: 'user', content: 'old' },
			{ role: 'user', content: [{ type: 'input_text', text: 'newest words' }] },
		];
		expect(json(await post('/v1/responses', { model: 'gk-chat-1', input })).output_text).toBe('Echo: newest words');
	});

	it('streams typed events from response.created to response.completed, then [DONE]', async () => {
		const res = await post('/v1/responses', { model: 'gpt-4o-mini', input: 'a b c', stream: true });
		const events = res.text.split('\n').filter((l) => l.startsWith('event: ')).map((l) => l.slice(7));
		expect(events[0]).toBe('response.created');
		expect(events[events.length - 1]).toBe('response.completed');
		const lines = dataLines(res.text);
		expect(lines[lines.length - 1]).toBe('[DONE]');
		const payloads = lines.slice(0, -1).map((l) => JSON.parse(l));
		expect(payloads.map((p) => p.type)).toEqual(events);
		const deltas = payloads.filter((p) => p.type === 'response.output_text.delta').map((p) => p.delta);
		expect(deltas.length).toBeGreaterThan(2);
		expect(deltas.join('')).toBe('Echo: a b c');
		expect(payloads[payloads.length - 1].response.output_text).toBe('Echo: a b c');
	});
});

describe('image parts in messages (the Chat node sends them)', () => {
	const png = Buffer.from('89504e470d0a1a0a0000', 'hex');
	const dataUrl = `data:image/png;base64,${png.toString('base64')}`;

	it('chat completions and responses note each image they saw: type and size of a data: URL, else the URL', async () => {
		const chat = await post('/v1/chat/completions', {
			model: 'gpt-4o-mini',
			messages: [
				{
					role: 'user',
					content: [
						{ type: 'text', text: 'what is this' },
						{ type: 'image_url', image_url: { url: dataUrl, detail: 'low' } },
						{ type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
					],
				},
			],
		});
		expect(json(chat).choices[0].message.content).toBe(
			'Echo: what is this\n[image image/png, 10 bytes]\n[image https://example.com/a.jpg]',
		);
		const responses = await post('/v1/responses', {
			model: 'gpt-4o-mini',
			input: [{ role: 'user', content: [{ type: 'input_image', image_url: dataUrl, detail: 'auto' }] }],
		});
		expect(json(responses).output_text).toBe('Echo: [image image/png, 10 bytes]');
	});

	it.each([
		['chat, no url', '/v1/chat/completions', 'messages', { type: 'image_url', image_url: {} }, 'messages.0.content.0.image_url.url: '],
		['chat, a file path', '/v1/chat/completions', 'messages', { type: 'image_url', image_url: { url: '/tmp/a.png' } }, 'messages.0.content.0.image_url.url: '],
		['chat, bad detail', '/v1/chat/completions', 'messages', { type: 'image_url', image_url: { url: dataUrl, detail: 'max' } }, 'messages.0.content.0.image_url.detail: '],
		['responses, url as object', '/v1/responses', 'input', { type: 'input_image', image_url: { url: dataUrl } }, 'input.0.content.0.image_url: '],
		['responses, bad detail', '/v1/responses', 'input', { type: 'input_image', image_url: dataUrl, detail: 'x' }, 'input.0.content.0.detail: '],
	])('rejects a malformed image part with 400 (%s)', async (_name, path, list, part, message) => {
		const res = await post(path, { model: 'gpt-4o-mini', [list]: [{ role: 'user', content: [part] }] });
		expect(res.status).toBe(400);
		expect(json(res).error.message.startsWith(message)).toBe(true);
	});
});

describe('images', () => {
	const pngSize = (buf: Buffer) => [buf.readUInt32BE(16), buf.readUInt32BE(20)];

	it('returns valid deterministic PNGs as b64_json', async () => {
		const ask = { model: 'img-1', prompt: 'a red fox', n: 2, size: '256x256', response_format: 'b64_json' };
		const first = json(await post('/v1/images/generations', ask));
		expect(first.created).toEqual(expect.any(Number));
		expect(first.data).toHaveLength(2);
		const [a, b] = first.data.map((d: { b64_json: string }) => Buffer.from(d.b64_json, 'base64'));
		expect(a.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
		expect(pngSize(a)).toEqual([256, 256]);
		expect(a.equals(b)).toBe(false);
		const again = json(await post('/v1/images/generations', ask));
		expect(Buffer.from(again.data[0].b64_json, 'base64').equals(a)).toBe(true);
	});

	it('serves url images without auth, logging the served sha256', async () => {
		const res = json(await post('/v1/images/generations', { model: 'img-1-hd', prompt: 'sky', size: '512x512' }));
		expect(res.data).toHaveLength(1);
		const url: string = res.data[0].url;
		expect(url).toMatch(new RegExp(`^${mock.url}/files/images/img_[0-9a-f]+\\.png$`));
		const file = await rawRequest(url);
		expect(file.status).toBe(200);
		expect(file.headers['content-type']).toBe('image/png');
		expect(pngSize(file.body)).toEqual([512, 512]);
		const sha = createHash('sha256').update(file.body).digest('hex');
		const entry = (await mock.log()).find((e) => e.path.startsWith('/files/images/'));
		expect(entry).toMatchObject({ status: 200, sha256: sha, authorized: false });
	});

	it.each([
		[{ model: 'img-1', prompt: 'x', n: 5 }, /^n: /],
		[{ model: 'img-1', prompt: 'x', size: '300x300' }, /^size: /],
		[{ model: 'img-1', prompt: '' }, /^prompt: /],
		[{ model: 'gpt-4o-mini', prompt: 'x' }, /^model: 'gpt-4o-mini' is not an image model/],
	])('rejects %j with 400', async (body, message) => {
		const res = await post('/v1/images/generations', body);
		expect(res.status).toBe(400);
		expect(json(res).error.message).toMatch(message);
	});
});
