/**
 * The mock's new-api personality on the wire, byte for byte where a client could depend on it (the facts are in
 * ../shared/GATEWAY-REAL.md): statuses, submit and refusal shapes, 401, artifacts, Range/HEAD content, the bare 429,
 * `: PING` and the usage chunk in SSE, the model list; and the `[[new-api]]` marker in a default-mode mock.
 */
import { createHash } from 'crypto';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { rawRequest, type RawResponse } from '../mock/rawRequest';
import { startMockService, type MockService } from '../mock/server';

let mock: MockClient;
const LIMITED_KEY = 'limited-key-without-video';
const VIDEO_MODEL = 'gk_video';

beforeAll(async () => {
	mock = await spawnMockProcess({ personality: 'new-api', secondaryKeys: { [LIMITED_KEY]: { video: false } } });
});
afterAll(() => mock?.stop());
beforeEach(() => mock.reset());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function call(
	path: string,
	opts: { method?: string; body?: unknown; headers?: Record<string, string>; key?: string | null; base?: string } = {},
): Promise<RawResponse> {
	const key = opts.key === undefined ? mock.apiKey : opts.key;
	return rawRequest(`${opts.base ?? mock.url}${path}`, {
		method: opts.method,
		body: opts.body,
		headers: { ...(key === null ? {} : { Authorization: `Bearer ${key}` }), ...opts.headers },
	});
}

const json = (res: RawResponse) => JSON.parse(res.body.toString('utf8'));

async function submit(prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
	const res = await call('/v1/tasks/vendor', { body: { model: VIDEO_MODEL, prompt, ...extra } });
	expect(res.status).toBe(200);
	return json(res).task_id;
}

async function waitFor(taskId: string, status: string, timeoutMs = 5000): Promise<Record<string, unknown>> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const body = json(await call(`/v1/tasks/${taskId}`));
		if (body.status === status) return body;
		if (Date.now() > deadline) throw new Error(`${taskId} is ${body.status}, never ${status}`);
		await sleep(20);
	}
}

test('the process knob: /__mock/state says new-api, every answer carries X-Oneapi-Request-Id', async () => {
	const state = (await (await fetch(`${mock.url}/__mock/state`)).json()) as { personality: string };
	expect(state.personality).toBe('new-api');
	const res = await call('/v1/models');
	expect(res.headers['x-oneapi-request-id']).toMatch(/^\d{14}[A-Za-z0-9]{16}$/);
});

test('submit: 200 {id, task_id: task_+32, status:"queued", model, created_at}', async () => {
	const before = Math.floor(Date.now() / 1000);
	const res = await call('/v1/tasks/vendor', { body: { model: VIDEO_MODEL, prompt: 'a cat' } });
	expect(res.status).toBe(200);
	const body = json(res);
	expect(Object.keys(body)).toEqual(['id', 'task_id', 'status', 'model', 'created_at']);
	expect(body.task_id).toMatch(/^task_[A-Za-z0-9]{32}$/);
	expect(body).toEqual({
		id: body.task_id,
		task_id: body.task_id,
		status: 'queued',
		model: VIDEO_MODEL,
		created_at: expect.any(Number),
	});
	expect(body.created_at).toBeGreaterThanOrEqual(before);
	expect(await mock.submissions()).toBe(1);
});

test('status: flat, NOT_START 0% → SUBMITTED 10% → QUEUED 20% → IN_PROGRESS 30%+ → SUCCESS 100%', async () => {
	const id = await submit('a slow one [[queuedMs=900]] [[runMs=600]]');
	const seen: Record<string, unknown>[] = [];
	for (;;) {
		const res = await call(`/v1/tasks/${id}`);
		expect(res.headers['cache-control']).toBe('private, no-store');
		const body = json(res);
		seen.push(body);
		if (body.status === 'SUCCESS') break;
		await sleep(25);
	}
	const order = seen.map((s) => s.status).filter((s, i, all) => i === 0 || all[i - 1] !== s);
	expect(order).toEqual(['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS']);
	for (const s of seen) {
		expect(Object.keys(s)).toEqual([
			'task_id',
			'platform',
			'status',
			'progress',
			'fail_reason',
			'created_at',
			'finished_at',
		]);
		expect(s).toMatchObject({ task_id: id, platform: 'vendor', fail_reason: '' });
		const progress = Number(String(s.progress).replace('%', ''));
		const want = {
			NOT_START: [0, 0],
			SUBMITTED: [10, 10],
			QUEUED: [20, 20],
			IN_PROGRESS: [30, 99],
			SUCCESS: [100, 100],
		};
		const [lo, hi] = want[s.status as keyof typeof want];
		expect(String(s.progress)).toMatch(/^\d+%$/);
		expect(progress).toBeGreaterThanOrEqual(lo);
		expect(progress).toBeLessThanOrEqual(hi);
		expect(s.finished_at === 0).toBe(s.status !== 'SUCCESS');
	}
});

test('FAILURE carries fail_reason and finished_at; an unknown task is 404 "Task not found"', async () => {
	const id = await submit('doomed [[fail=content policy: no cats]] [[instant]]');
	const body = await waitFor(id, 'FAILURE');
	expect(body).toMatchObject({ progress: '100%', fail_reason: 'content policy: no cats' });
	expect(body.finished_at).toBeGreaterThan(0);
	const missing = await call('/v1/tasks/task_nope');
	expect(missing.status).toBe(404);
	expect(missing.body.toString()).toBe('{"error":{"message":"Task not found","type":"invalid_request_error"}}');
});

test('[[providerData]]: the status also carries the provider\'s own record, in its own words', async () => {
	const id = await submit('with data [[providerData]] [[never]]');
	const body = await waitFor(id, 'IN_PROGRESS');
	expect(Object.keys(body)).toEqual([
		'task_id',
		'platform',
		'status',
		'progress',
		'fail_reason',
		'created_at',
		'finished_at',
		'data',
	]);
	expect(body.data).toEqual({ id, object: 'video', status: 'processing', model: VIDEO_MODEL, seconds: '5' });
});

test('refusals: wrapped before submitting (404 plugin, 415, 400 JSON / model), flat from the submission', async () => {
	const plugin = await call('/v1/tasks/kling', { body: { model: VIDEO_MODEL, prompt: 'x' } });
	expect(plugin.status).toBe(404);
	expect(json(plugin)).toEqual({ error: { message: "task plugin 'kling' not found", type: 'invalid_request_error' } });

	const notJson = await rawRequest(`${mock.url}/v1/tasks/vendor`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'text/plain' },
	});
	expect(notJson.status).toBe(415);
	expect(json(notJson).error.type).toBe('invalid_request_error');

	// rawRequest sends JSON.stringify'd bodies only: the broken text goes by fetch.
	const broken = await fetch(`${mock.url}/v1/tasks/vendor`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'application/json' },
		body: '{"model": "gk_video", "prompt": ',
	});
	const badJson = { status: broken.status, body: Buffer.from(await broken.text()) } as RawResponse;
	expect(badJson.status).toBe(400);
	expect(json(badJson)).toEqual({ error: { message: 'invalid JSON body', type: 'invalid_request_error' } });

	const model = await call('/v1/tasks/vendor', { body: { model: 'img-1', prompt: 'x' } });
	expect(model.status).toBe(400);
	expect(json(model)).toEqual({
		error: { message: "model 'img-1' is not supported by task plugin 'vendor'", type: 'invalid_request_error' },
	});

	const flat = await call('/v1/tasks/vendor', { body: { model: VIDEO_MODEL, prompt: 'x', duration: 999 } });
	expect(flat.status).toBe(400);
	const body = json(flat);
	expect(Object.keys(body)).toEqual(['code', 'message', 'data']);
	expect(body).toEqual({ code: 'invalid_request', message: expect.stringMatching(/^duration: /), data: null });
	expect(await mock.submissions()).toBe(0);
});

test('auth: a wrong or missing key is 401 new_api_error with the request id; a key shut out of video 403', async () => {
	for (const key of [null, 'wrong-key']) {
		const res = await call('/v1/tasks/task_x', { key });
		expect(res.status).toBe(401);
		const id = res.headers['x-oneapi-request-id'];
		expect(res.body.toString()).toBe(
			`{"error":{"message":"Invalid token (request id: ${id})","type":"new_api_error","code":""}}`,
		);
	}
	expect((await call('/v1/chat/completions', { key: null, body: {} })).status).toBe(401);
	const shut = await call('/v1/tasks/vendor', { key: LIMITED_KEY, body: { model: VIDEO_MODEL, prompt: 'x' } });
	expect(shut.status).toBe(403);
	expect(json(shut).error).toMatchObject({ type: 'new_api_error', code: '' });
	expect((await call('/v1/models', { key: LIMITED_KEY })).status).toBe(200);
	expect(await mock.submissions()).toBe(0);
});

test('artifacts: [] until SUCCESS, then the video with an absolute, signed content_url', async () => {
	const id = await submit('art [[queuedMs=200]] [[runMs=200]]');
	const early = await call(`/v1/tasks/${id}/artifacts`);
	expect(early.status).toBe(200);
	expect(early.body.toString()).toBe(`{"task_id":"${id}","artifacts":[]}`);
	await waitFor(id, 'SUCCESS');
	const done = json(await call(`/v1/tasks/${id}/artifacts`));
	expect(done).toEqual({
		task_id: id,
		artifacts: [{ key: 'video', type: 'video', mime_type: 'video/mp4', content_url: expect.any(String) }],
	});
	const url = new URL(done.artifacts[0].content_url);
	expect(`${url.origin}${url.pathname}`).toBe(`${mock.url}/v1/tasks/${id}/artifacts/video/content`);
	expect(url.searchParams.get('access')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
});

test('content: Range, If-Range, HEAD, ETag, 416; the content_url needs no key', async () => {
	const id = await submit('bytes [[instant]] [[size=300000]]');
	await waitFor(id, 'SUCCESS');
	const path = `/v1/tasks/${id}/artifacts/video/content`;
	const full = await call(path);
	expect(full.status).toBe(200);
	expect(full.headers).toMatchObject({
		'content-type': 'video/mp4',
		'accept-ranges': 'bytes',
		'content-length': '300000',
	});
	const etag = full.headers.etag as string;
	expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
	expect(sha256(full.body)).toBe(await mock.artifactSha256(id));

	const part = await call(path, { headers: { Range: 'bytes=70000-199999' } });
	expect(part.status).toBe(206);
	expect(part.headers['content-range']).toBe('bytes 70000-199999/300000');
	expect(part.headers['content-length']).toBe('130000');
	expect(part.body.equals(full.body.subarray(70000, 200000))).toBe(true);

	const resume = await call(path, { headers: { Range: 'bytes=299000-', 'If-Range': etag } });
	expect(resume.status).toBe(206);
	expect(resume.body.equals(full.body.subarray(299000))).toBe(true);
	const suffix = await call(path, { headers: { Range: 'bytes=-10' } });
	expect(suffix.headers['content-range']).toBe('bytes 299990-299999/300000');
	expect(suffix.body.equals(full.body.subarray(299990))).toBe(true);

	const changed = await call(path, { headers: { Range: 'bytes=100-', 'If-Range': '"another"' } });
	expect(changed.status).toBe(200);
	expect(changed.body.length).toBe(300000);

	const head = await call(path, { method: 'HEAD', headers: { Range: 'bytes=10-19' } });
	expect(head.status).toBe(206);
	expect(head.headers).toMatchObject({ 'content-length': '10', 'content-range': 'bytes 10-19/300000', etag });
	expect(head.body.length).toBe(0);
	const headAll = await call(path, { method: 'HEAD' });
	expect(headAll.headers['content-length']).toBe('300000');

	const past = await call(path, { headers: { Range: 'bytes=300000-' } });
	expect(past.status).toBe(416);
	expect(past.headers['content-range']).toBe('bytes */300000');

	const { artifacts } = json(await call(`/v1/tasks/${id}/artifacts`));
	const open = await rawRequest(artifacts[0].content_url, { headers: { Range: 'bytes=0-99' } });
	expect(open.status).toBe(206);
	expect(open.body.equals(full.body.subarray(0, 100))).toBe(true);
	const forged = await rawRequest(`${mock.url}${path}?access=forged`);
	expect(forged.status).toBe(404);
	expect(json(forged)).toEqual({
		error: { message: 'artifact not found', type: 'artifact_not_found', code: 'artifact_not_found' },
	});
});

test('content errors: 409 artifact_not_ready, 404 artifact_not_found, 410 artifact_gone (masked 404 by access)', async () => {
	const running = await submit('not yet [[never]]');
	const early = await call(`/v1/tasks/${running}/artifacts/video/content`);
	expect(early.status).toBe(409);
	expect(json(early).error).toMatchObject({ type: 'artifact_not_ready', code: 'artifact_not_ready' });
	const other = await call(`/v1/tasks/${running}/artifacts/last_frame/content`);
	expect(other.status).toBe(404);
	expect(json(other).error).toMatchObject({ type: 'artifact_not_found', code: 'artifact_not_found' });

	const gone = await submit('brief [[instant]] [[ttlMs=100]]');
	await waitFor(gone, 'SUCCESS');
	const { artifacts } = json(await call(`/v1/tasks/${gone}/artifacts`));
	await sleep(150);
	const late = await call(`/v1/tasks/${gone}/artifacts/video/content`);
	expect(late.status).toBe(410);
	expect(json(late).error).toMatchObject({ type: 'artifact_gone', code: 'artifact_gone' });
	const masked = await rawRequest(artifacts[0].content_url);
	expect(masked.status).toBe(404);
	expect(json(masked).error.code).toBe('artifact_not_found');
});

test('relay rate limit: a bare 429 (no body, no Content-Type, no Retry-After); /v1/tasks is not limited', async () => {
	await mock.setLimits({ rateLimit: 1 });
	const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
	const answers = await Promise.all([1, 2, 3].map(() => call('/v1/chat/completions', { body: chat })));
	const limited = answers.filter((a) => a.status === 429);
	expect(limited.length).toBeGreaterThanOrEqual(1);
	for (const a of limited) {
		expect(a.body.length).toBe(0);
		expect(a.headers['content-type']).toBeUndefined();
		expect(a.headers['retry-after']).toBeUndefined();
	}
	const reads = await Promise.all([1, 2, 3, 4].map(() => call('/v1/tasks/task_nope')));
	expect(reads.map((r) => r.status)).toEqual([404, 404, 404, 404]);
	expect((await mock.keyStats()).limited).toBe(limited.length);
});

function sseFrames(text: string): { pings: number; frames: string[]; lines: string[] } {
	const lines = text.split('\n').filter((l) => l !== '');
	return {
		pings: lines.filter((l) => l === ': PING').length,
		frames: lines.filter((l) => l.startsWith('data: ')),
		lines,
	};
}

test('chat SSE: `: PING` between frames, usage in a last chunk with choices [] when include_usage asks', async () => {
	const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }], stream: true };
	const asked = await call('/v1/chat/completions', { body: { ...body, stream_options: { include_usage: true } } });
	expect(asked.headers['content-type']).toMatch(/^text\/event-stream/);
	expect(asked.headers['x-accel-buffering']).toBe('no');
	const { pings, frames, lines } = sseFrames(asked.body.toString());
	expect(pings).toBeGreaterThanOrEqual(2);
	expect(lines[0]).toMatch(/^data: /);
	expect(lines[lines.length - 1]).toBe('data: [DONE]');
	const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
	const last = chunks[chunks.length - 1];
	expect(last.choices).toEqual([]);
	expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
	expect(chunks.slice(0, -1).every((c) => c.usage === undefined)).toBe(true);
	expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: one two three');

	const plain = sseFrames((await call('/v1/chat/completions', { body })).body.toString());
	expect(plain.frames.some((f) => f.includes('"usage"'))).toBe(false);
	const responses = await call('/v1/responses', { body: { model: 'gpt-4o-mini', input: 'one two', stream: true } });
	expect(sseFrames(responses.body.toString()).pings).toBeGreaterThanOrEqual(1);
});

test('models: {success, data:[… supported_endpoint_types], object:"list"}', async () => {
	const res = await call('/v1/models');
	const body = json(res);
	expect(Object.keys(body)).toEqual(['success', 'data', 'object']);
	expect(body.success).toBe(true);
	expect(body.object).toBe('list');
	for (const m of body.data)
		expect(Object.keys(m)).toEqual(['id', 'object', 'created', 'owned_by', 'supported_endpoint_types']);
	const types = Object.fromEntries(
		body.data.map((m: { id: string; supported_endpoint_types: string[] }) => [m.id, m.supported_endpoint_types]),
	);
	expect(types['gpt-4o-mini']).toEqual(['openai']);
	expect(types['img-1']).toEqual(['image-generation']);
	expect(types[VIDEO_MODEL]).toEqual(['openai-video']);
});

test('faults speak new-api: a 429 on a submission is flat, on chat bare; content 503 is artifact_upstream_busy', async () => {
	await mock.setFaults([
		{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'status', status: 429 },
		{ path: '^/v1/chat/completions$', kind: 'status', status: 429 },
		{ path: '/content$', kind: 'status', status: 503 },
	]);
	const sub = await call('/v1/tasks/vendor', { body: { model: VIDEO_MODEL, prompt: 'x' } });
	expect(sub.status).toBe(429);
	expect(sub.body.toString()).toBe('{"code":"rate_limit","message":"当前分组上游负载已饱和，请稍后再试","data":null}');
	expect(await mock.submissions()).toBe(0);
	const chat = await call('/v1/chat/completions', {
		body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
	});
	expect([chat.status, chat.body.length, chat.headers['content-type']]).toEqual([429, 0, undefined]);
	const content = await call('/v1/tasks/task_x/artifacts/video/content');
	expect(json(content)).toEqual({
		error: { message: 'injected fault: HTTP 503', type: 'artifact_upstream_busy', code: 'artifact_upstream_busy' },
	});

	await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'cut-after-accept' }]);
	const cut = await call('/v1/tasks/vendor', { body: { model: VIDEO_MODEL, prompt: 'x' } });
	expect(cut.error).toBeDefined();
	expect(await mock.submissions()).toBe(1);
});

describe('the [[new-api]] marker in a default-mode mock', () => {
	let plain: MockService;
	beforeAll(async () => {
		plain = await startMockService();
	});
	afterAll(() => plain?.close());

	test('a marked task speaks new-api end to end; an unmarked one and a missing key stay default', async () => {
		const base = plain.url;
		const key = plain.apiKey;
		const marked = await call('/v1/tasks/vendor', {
			base,
			key,
			body: { model: VIDEO_MODEL, prompt: 'go [[new-api]] [[queuedMs=300]] [[runMs=100]]' },
		});
		const id = json(marked).task_id;
		expect(json(marked)).toMatchObject({ id, status: 'queued', model: VIDEO_MODEL });
		const first = json(await call(`/v1/tasks/${id}`, { base, key }));
		expect(first).toMatchObject({ status: 'NOT_START', progress: '0%', fail_reason: '', finished_at: 0 });
		expect(json(await call(`/v1/tasks/${id}/artifacts`, { base, key }))).toEqual({ task_id: id, artifacts: [] });
		expect((await call(`/v1/tasks/${id}`, { base, key: null })).status).toBe(401);

		const unmarked = json(await call('/v1/tasks/vendor', { base, key, body: { model: VIDEO_MODEL, prompt: 'go' } }));
		expect(Object.keys(unmarked)).toEqual(['task_id']);
		expect(json(await call(`/v1/tasks/${unmarked.task_id}`, { base, key })).status).toBe('QUEUED');
		expect((await call('/v1/tasks/task_x', { base, key: null })).status).toBe(403);
		const models = json(await call('/v1/models', { base, key }));
		expect(models.success).toBeUndefined();
	});

	test('a marked chat stream carries PINGs; an unmarked one does not', async () => {
		const base = plain.url;
		const key = plain.apiKey;
		const ask = (content: string) =>
			call('/v1/chat/completions', {
				base,
				key,
				body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content }] },
			});
		expect(sseFrames((await ask('a b c [[new-api]]')).body.toString()).pings).toBeGreaterThan(0);
		expect(sseFrames((await ask('a b c')).body.toString()).pings).toBe(0);
	});
});
