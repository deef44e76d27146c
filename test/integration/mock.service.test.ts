/** The mock service as other tests see it: a separate process, auth, models, the video contract end to end. */
import { createHash } from 'crypto';
import { VIDEO_MODELS, VIDEO_MODEL_IDS, type VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { rawRequest } from '../mock/rawRequest';

let mock: MockClient;
const LIMITED_KEY = 'limited-key-without-video';

beforeAll(async () => {
	mock = await spawnMockProcess({ secondaryKeys: { [LIMITED_KEY]: { video: false } } });
});
afterAll(() => mock?.stop());
beforeEach(() => mock.reset());

const auth = () => ({ Authorization: `Bearer ${mock.apiKey}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
	const res = await fetch(`${mock.url}${path}`, {
		method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
		headers: { ...auth(), 'Content-Type': 'application/json', ...init.headers },
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	});
	const text = await res.text();
	return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

const submit = (body: Record<string, unknown>) => call('/v1/tasks/vendor', { body });

/** A body using every capability the matrix grants the model (and nothing else). */
function fullBody(m: VideoModelCapabilities): Record<string, unknown> {
	return {
		model: m.id,
		prompt: 'a cat on a skateboard',
		duration: m.duration.max,
		aspect_ratio: m.aspectRatios[m.aspectRatios.length - 1],
		resolution: m.resolutions[m.resolutions.length - 1],
		...(m.seed ? { seed: 42 } : {}),
		reference_images: Array.from({ length: m.references.images }, (_, i) => `https://example.com/i${i}.png`),
		...(m.references.videos ? { reference_videos: ['https://example.com/v.mp4'] } : {}),
		...(m.references.audios ? { reference_audios: ['http://example.com/a.mp3'] } : {}),
		...(m.firstImage ? { first_image: ['https://example.com/first.png'] } : {}),
		...(m.lastImage ? { last_image: 'https://example.com/last.png' } : {}),
		...(m.audio.supported ? { generate_audio: 'false' } : {}),
	};
}

async function waitForStatus(taskId: string, wanted: string, timeoutMs = 5000): Promise<string[]> {
	const seen: string[] = [];
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const { json } = await call(`/v1/tasks/${taskId}`);
		seen.push(json.status);
		if (json.status === wanted) return seen;
		await sleep(25);
	}
	throw new Error(`task ${taskId} never reached ${wanted}; saw ${seen.join(',')}`);
}

describe('auth', () => {
	it('answers 403 with error.message without a key, with a wrong key, and on video for a key without video', async () => {
		for (const headers of [{ Authorization: '' }, { Authorization: 'Bearer nope' }, { Authorization: mock.apiKey }]) {
			const res = await call('/v1/models', { headers });
			expect(res.status).toBe(403);
			expect(typeof res.json.error.message).toBe('string');
			expect(JSON.stringify(res.json)).not.toContain(mock.apiKey);
		}
		const limited = { Authorization: `Bearer ${LIMITED_KEY}` };
		expect((await call('/v1/models', { headers: limited })).status).toBe(200);
		const denied = await call('/v1/tasks/vendor', { headers: limited, body: fullBody(VIDEO_MODELS[0]) });
		expect(denied.status).toBe(403);
		expect(await mock.submissions()).toBe(0);
	});

	it('logs every request in order with authorized flags and never the key', async () => {
		await call('/v1/models', { headers: { Authorization: 'Bearer wrong' } });
		await call('/v1/models');
		await call('/v1/nothing-here');
		const log = await mock.log();
		expect(log.map((e) => [e.seq, e.path, e.status, e.authorized])).toEqual([
			[1, '/v1/models', 403, false],
			[2, '/v1/models', 200, true],
			[3, '/v1/nothing-here', 404, true],
		]);
		expect(JSON.stringify(log)).not.toContain(mock.apiKey);
	});
});

describe('models', () => {
	it('lists the 11 matrix models plus chat and image models, OpenAI style', async () => {
		const { status, json } = await call('/v1/models');
		expect(status).toBe(200);
		expect(json.object).toBe('list');
		const ids = json.data.map((m: { id: string }) => m.id);
		expect(ids).toEqual(expect.arrayContaining([...VIDEO_MODEL_IDS, 'gpt-4o-mini', 'gk-chat-1', 'img-1', 'img-1-hd']));
		expect(ids.filter((id: string) => VIDEO_MODEL_IDS.includes(id))).toHaveLength(11);
		for (const m of json.data) expect(m).toEqual({ id: m.id, object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
	});
});

describe('video submission validation', () => {
	it.each(VIDEO_MODELS.map((m) => [m.id, m] as const))('accepts a body using every capability of %s', async (_id, m) => {
		const res = await submit(fullBody(m));
		expect(res.json).toEqual({ task_id: expect.stringMatching(/^task_[0-9a-f]+$/) });
		expect(res.status).toBe(200);
	});

	it('accepts the minimal body where duration may be omitted, and integer-string seeds', async () => {
		expect((await submit({ model: 'gk_video', prompt: 'x' })).status).toBe(200);
		expect((await submit({ model: 'sd_2.0_discount', prompt: 'x', duration: 5, seed: '-12' })).status).toBe(200);
		expect(await mock.submissions()).toBe(2);
	});

	const invalid: [string, Record<string, unknown>, RegExp][] = [
		['unknown field', { model: 'gk_video', prompt: 'x', style: 'anime' }, /^style: unknown field \(model gk_video\)$/],
		['unknown model', { model: 'sd_9', prompt: 'x', duration: 5 }, /^model: 'sd_9' is not a video model/],
		['missing model', { prompt: 'x' }, /^model: required/],
		['blank prompt', { model: 'gk_video', prompt: '   ' }, /^prompt: must not be empty \(model gk_video\)$/],
		['missing prompt', { model: 'gk_video' }, /^prompt: required/],
		['missing duration', { model: 'sd_2.0_discount', prompt: 'x' }, /^duration: required .*\(model sd_2\.0_discount\)$/],
		['non-integer duration', { model: 'gk_video', prompt: 'x', duration: 5.5 }, /^duration: must be an integer/],
		['duration as string', { model: 'gk_video', prompt: 'x', duration: '5' }, /^duration: must be an integer/],
		['duration above range', { model: 'sd_2.5_discount', prompt: 'x', duration: 31 }, /^duration: 31 is outside 5-30/],
		['ratio not allowed', { model: 'sdx_2.0_nsfw_c1', prompt: 'x', duration: 5, aspect_ratio: '21:9' }, /^aspect_ratio: /],
		['resolution not allowed', { model: 'sd_2.5_discount', prompt: 'x', duration: 5, resolution: '4k' }, /^resolution: '4k'/],
		['seed unsupported', { model: 'gk_video', prompt: 'x', seed: 1 }, /^seed: not supported \(model gk_video\)$/],
		['non-integer seed string', { model: 'sd_2.0_discount', prompt: 'x', duration: 5, seed: '1.5' }, /^seed: must be an integer/],
		['video refs unsupported', { model: 'gk_video', prompt: 'x', reference_videos: [] }, /^reference_videos: not supported/],
		['too many images', { model: 'sd_2.0_discount', prompt: 'x', duration: 5, reference_images: Array(10).fill('https://e.com/a.png') }, /^reference_images: at most 9 allowed, got 10/],
		['file URL', { model: 'gk_video', prompt: 'x', reference_images: ['file:///etc/passwd'] }, /^reference_images\[0\]: must be an http\(s\) URL/],
		['local path', { model: 'gk_video', prompt: 'x', reference_images: ['https://e.com/a.png', '/tmp/a.png'] }, /^reference_images\[1\]: must be an http\(s\) URL/],
		['first frame unsupported', { model: 'sd_2.0_discount', prompt: 'x', duration: 5, first_image: 'https://e.com/a.png' }, /^first_image: not supported/],
		['last frame unsupported', { model: 'gk_1.5', prompt: 'x', last_image: 'https://e.com/a.png' }, /^last_image: not supported \(model gk_1\.5\)$/],
		['two first frames', { model: 'sd_2.0_special', prompt: 'x', duration: 5, first_image: ['https://e.com/a.png', 'https://e.com/b.png'] }, /^first_image: an array must hold exactly one URL, got 2/],
		['bad audio flag', { model: 'sd_2.0_special', prompt: 'x', duration: 5, generate_audio: 'yes' }, /^generate_audio: must be a boolean/],
		['audio unsupported', { model: 'gk_1.5', prompt: 'x', generate_audio: true }, /^generate_audio: not supported/],
	];
	it.each(invalid)('rejects %s with 400 naming the field', async (_name, body, message) => {
		const res = await submit(body);
		expect(res.status).toBe(400);
		expect(res.json.error.message).toMatch(message);
	});

	it('takes duration bounds from the matrix for every model, and creates no task on rejection', async () => {
		for (const m of VIDEO_MODELS) {
			const below = await submit({ model: m.id, prompt: 'x', duration: m.duration.min - 1 });
			expect([m.id, below.status]).toEqual([m.id, 400]);
			expect(below.json.error.message).toMatch(/^duration: /);
			const above = await submit({ model: m.id, prompt: 'x', duration: m.duration.max + 1 });
			expect([m.id, above.status]).toEqual([m.id, 400]);
		}
		expect(await mock.submissions()).toBe(0);
		const log = await mock.log();
		expect(log.every((e) => e.outcome === 'rejected' && e.body !== undefined)).toBe(true);
	});
});

describe('video task lifecycle', () => {
	it('goes QUEUED → IN_PROGRESS (with NN% progress) → SUCCESS and serves content matching artifactSha256', async () => {
		await mock.setTaskScript({ queuedMs: 150, runMs: 300, artifactBytes: 300_000 });
		const { json } = await submit({ model: 'gk_1.5', prompt: 'sunrise', first_image: 'https://e.com/f.png' });
		const id = json.task_id;

		const early = await call(`/v1/tasks/${id}/artifacts`);
		expect(early.status).toBe(409);
		expect(early.json.error.message).toMatch(/QUEUED|IN_PROGRESS/);

		const seen = await waitForStatus(id, 'SUCCESS');
		expect(seen[0]).toBe('QUEUED');
		expect(seen).toContain('IN_PROGRESS');
		expect(seen.indexOf('IN_PROGRESS')).toBeGreaterThan(seen.lastIndexOf('QUEUED'));
		const progress = (await mock.log()).map((e) => e).filter((e) => e.path === `/v1/tasks/${id}`);
		expect(progress.length).toBeGreaterThan(2);

		const done = await call(`/v1/tasks/${id}`);
		expect(done.json).toEqual({ task_id: id, status: 'SUCCESS', model: 'gk_1.5', created_at: expect.any(Number) });

		const artifacts = await call(`/v1/tasks/${id}/artifacts`);
		expect(artifacts.json).toEqual({ data: [{ key: 'video', type: 'video', mime_type: 'video/mp4' }] });

		const content = await rawRequest(`${mock.url}/v1/tasks/${id}/artifacts/video/content`, { headers: auth() });
		expect(content.status).toBe(200);
		expect(content.headers['content-type']).toBe('video/mp4');
		expect(content.headers['content-length']).toBe('300000');
		expect(content.body.length).toBe(300_000);
		expect(content.body.subarray(4, 12).toString('latin1')).toBe('ftypisom');
		const sha = createHash('sha256').update(content.body).digest('hex');
		expect(await mock.artifactSha256(id)).toBe(sha);

		// The temporary URL the content is proxied from serves the same bytes, without a key.
		const record = await mock.task(id);
		const direct = await rawRequest(`${mock.url}${record.mediaPath}`);
		expect(direct.status).toBe(200);
		expect(createHash('sha256').update(direct.body).digest('hex')).toBe(sha);
		const other = await rawRequest(`${mock.url}/v1/tasks/${id}/artifacts/poster/content`, { headers: auth() });
		expect(other.status).toBe(404);
	});

	it('shows progress as NN% while IN_PROGRESS', async () => {
		const { json } = await submit({ model: 'gk_video', prompt: '[[queuedMs=0]] [[runMs=5000]]' });
		await sleep(100);
		const status = await call(`/v1/tasks/${json.task_id}`);
		expect(status.json.status).toBe('IN_PROGRESS');
		expect(status.json.progress).toMatch(/^\d{1,2}%$/);
	});

	it('reports FAILURE with fail_reason (default and from the [[fail=...]] marker) and no artifacts', async () => {
		const a = (await submit({ model: 'gk_video', prompt: 'x [[fail]] [[instant]]' })).json.task_id;
		const b = (await submit({ model: 'gk_video', prompt: 'x [[fail=too many cats]] [[instant]]' })).json.task_id;
		const first = await call(`/v1/tasks/${a}`);
		expect(first.json).toMatchObject({ status: 'FAILURE', fail_reason: 'content policy violation' });
		expect((await call(`/v1/tasks/${b}`)).json.fail_reason).toBe('too many cats');
		expect((await call(`/v1/tasks/${a}/artifacts`)).status).toBe(409);
		expect((await call(`/v1/tasks/${a}/artifacts/video/content`)).status).toBe(409);
	});

	it('keeps a [[never]] task IN_PROGRESS and answers 404 for unknown tasks', async () => {
		const id = (await submit({ model: 'gk_video', prompt: '[[never]] [[instant]]' })).json.task_id;
		await sleep(50);
		expect((await call(`/v1/tasks/${id}`)).json).toMatchObject({ status: 'IN_PROGRESS', progress: '99%' });
		const missing = await call('/v1/tasks/task_doesnotexist');
		expect(missing.status).toBe(404);
		expect(missing.json.error.message).toMatch(/task_doesnotexist/);
	});

	it('expires the temporary URL urlTtlMs after SUCCESS: content answers 410 saying so', async () => {
		const id = (await submit({ model: 'gk_video', prompt: '[[instant]] [[ttlMs=150]]' })).json.task_id;
		expect((await rawRequest(`${mock.url}/v1/tasks/${id}/artifacts/video/content`, { headers: auth() })).status).toBe(200);
		await sleep(250);
		const late = await call(`/v1/tasks/${id}/artifacts/video/content`);
		expect(late.status).toBe(410);
		expect(late.json.error.message).toMatch(/temporary video URL expired/);
		expect((await call(`/v1/tasks/${id}`)).json.status).toBe('SUCCESS');
	});

	it('switches the artifact list shape by script and by marker, and sizes the artifact by marker', async () => {
		await mock.setTaskScript({ queuedMs: 0, runMs: 0, artifactListShape: 'bare' });
		const bare = (await submit({ model: 'gk_video', prompt: 'x' })).json.task_id;
		const wrapped = (await submit({ model: 'gk_video', prompt: 'x [[shape=artifacts]] [[size=1000]]' })).json.task_id;
		const video = { key: 'video', type: 'video', mime_type: 'video/mp4' };
		expect((await call(`/v1/tasks/${bare}/artifacts`)).json).toEqual([video]);
		expect((await call(`/v1/tasks/${wrapped}/artifacts`)).json).toEqual({ artifacts: [video] });
		const small = await rawRequest(`${mock.url}/v1/tasks/${wrapped}/artifacts/video/content`, { headers: auth() });
		expect(small.body.length).toBe(1000);
		await mock.reset();
		const after = (await submit({ model: 'gk_video', prompt: '[[instant]]' })).json.task_id;
		expect((await call(`/v1/tasks/${after}/artifacts`)).json).toEqual({ data: [video] });
	});

	it('throttles downloads with [[bps=...]]', async () => {
		const id = (await submit({ model: 'gk_video', prompt: '[[instant]] [[size=40k]] [[bps=100k]]' })).json.task_id;
		const started = Date.now();
		const res = await rawRequest(`${mock.url}/v1/tasks/${id}/artifacts/video/content`, { headers: auth() });
		expect(res.body.length).toBe(40 * 1024);
		expect(Date.now() - started).toBeGreaterThanOrEqual(300);
	});
});
