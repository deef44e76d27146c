/**
 * Issue 32: the mock reads the frame and reference URLs it is given when they are on loopback (as n8n's signed
 * binary URLs are in the e2e run), records what it read, and fails the task when it cannot, naming the field and the
 * URL without its query (n8n's token). Both personalities; other hosts and `fetchMedia: 'off'` are never fetched.
 */
import type { AddressInfo } from 'net';
import { createServer } from 'net';
import { createMockClient, type MockClient } from '../mock/client';
import { deterministicPng, sha256Hex } from '../mock/media';
import { spawnMockProcess } from '../mock/process';
import { startMockService, type MockService } from '../mock/server';
import type { Personality } from '../mock/types';
import { startScriptedServer, type ScriptedServer } from '../support/scriptedServer';

const PNG = deterministicPng('issue-32-frame', 48, 32);
const CLIP = Buffer.from('not really an mp4, but bytes all the same');
const SECRET = 'SIGNED-JWT-SECRET';
const MODEL = 'sd_2.5_special';

let frames: ScriptedServer;
/** A port nothing listens on (bound, then closed): connection refused. */
let refusedPort: number;

beforeAll(async () => {
	frames = await startScriptedServer(async (req, res) => {
		const path = req.path.split('?')[0];
		if (path === '/frame.png' || path === '/slow.png') {
			if (path === '/slow.png') await new Promise((r) => setTimeout(r, 400));
			res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
			return void res.end(PNG);
		}
		if (path === '/clip.mp4') return void res.writeHead(200, { 'content-type': 'video/mp4' }).end(CLIP);
		if (path === '/moved.png') return void res.writeHead(302, { location: '/frame.png' }).end();
		if (path === '/empty.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end();
		res.writeHead(404, { 'content-type': 'text/plain' }).end('no such file');
	});
	const probe = createServer();
	await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
	refusedPort = (probe.address() as AddressInfo).port;
	await new Promise((r) => probe.close(r));
});
afterAll(() => frames?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fetched = (path: string) => frames.requests.filter((r) => r.path.split('?')[0] === path);

describe.each<Personality>(['default', 'new-api'])('personality %s', (personality) => {
	let service: MockService;
	let mock: MockClient;

	beforeAll(async () => {
		service = await startMockService({ personality });
		mock = createMockClient(service.url, service.apiKey, service.close);
	});
	afterAll(() => service?.close());
	beforeEach(async () => {
		await mock.reset();
		frames.requests.length = 0;
	});

	async function submit(extra: Record<string, unknown>, prompt = 'a cat [[instant]]'): Promise<string> {
		const res = await fetch(`${mock.url}/v1/tasks/vendor`, {
			method: 'POST',
			headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'application/json' },
			body: JSON.stringify({ model: MODEL, prompt, duration: 5, ...extra }),
		});
		const body = (await res.json()) as { task_id: string };
		expect(res.status).toBe(200);
		return body.task_id;
	}

	const status = async (id: string) =>
		(await (
			await fetch(`${mock.url}/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${mock.apiKey}` } })
		).json()) as { status: string; fail_reason?: string };

	async function finished(id: string): Promise<{ status: string; fail_reason?: string }> {
		const deadline = Date.now() + 12_000;
		for (;;) {
			const s = await status(id);
			if (s.status === 'SUCCESS' || s.status === 'FAILURE') return s;
			if (Date.now() > deadline) throw new Error(`${id} still ${s.status}`);
			await sleep(20);
		}
	}

	test('a loopback first frame is fetched with its query; the record has the exact bytes and sha256', async () => {
		const url = `${frames.url}/frame.png?token=${SECRET}`;
		const id = await submit({ first_image: url });
		expect((await finished(id)).status).toBe('SUCCESS');
		expect(fetched('/frame.png').map((r) => [r.method, r.path, r.headers['user-agent']])).toEqual([
			['GET', `/frame.png?token=${SECRET}`, 'gen-gateway-mock/fetch-media'],
		]);
		expect(await mock.fetchedMedia(id)).toEqual([
			{
				field: 'first_image',
				index: 0,
				url,
				status: 200,
				bytes: PNG.length,
				sha256: sha256Hex(PNG),
				contentType: 'image/png',
			},
		]);
		expect((await mock.task(id)).fetchedMedia).toEqual(await mock.fetchedMedia(id));
	});

	test("Image → Video: the mock's own generated image as first frame is fetched, the image's bytes", async () => {
		const res = await fetch(`${mock.url}/v1/images/generations`, {
			method: 'POST',
			headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'application/json' },
			body: JSON.stringify({ model: 'img-1', prompt: 'a frame', size: '256x256' }),
		});
		const image = ((await res.json()) as { data: { url: string }[] }).data[0].url;
		const id = await submit({ first_image: image });
		expect((await finished(id)).status).toBe('SUCCESS');
		const imageId = /\/files\/images\/([^/]+)\.png$/.exec(image)![1];
		const { sha256 } = (await (await fetch(`${mock.url}/__mock/images/${imageId}`)).json()) as { sha256: string };
		expect(await mock.fetchedMedia(id)).toEqual([expect.objectContaining({ url: image, status: 200, sha256 })]);
		// Its log tells the mock's own read from a client's download.
		const reads = (await mock.log()).filter((e) => e.path.startsWith('/files/images/'));
		expect(reads.map((e) => [e.status, e.mediaFetch, e.sha256])).toEqual([[200, true, sha256]]);
	});

	test('every frame and reference URL is fetched, recorded in field order', async () => {
		const id = await submit({
			first_image: `${frames.url}/frame.png?a=1`,
			last_image: [`${frames.url}/frame.png?a=2`],
			reference_images: [`${frames.url}/frame.png?a=3`, 'https://example.com/not-fetched.png'],
			reference_videos: [`${frames.url}/clip.mp4`],
			reference_audios: [`http://localhost:${new URL(frames.url).port}/clip.mp4?sound`],
		});
		expect((await finished(id)).status).toBe('SUCCESS');
		const records = await mock.fetchedMedia(id);
		expect(records.map((r) => [r.field, r.index, r.status, r.sha256])).toEqual([
			['first_image', 0, 200, sha256Hex(PNG)],
			['last_image', 0, 200, sha256Hex(PNG)],
			['reference_images', 0, 200, sha256Hex(PNG)],
			['reference_videos', 0, 200, sha256Hex(CLIP)],
			['reference_audios', 0, 200, sha256Hex(CLIP)],
		]);
	});

	test('the task cannot finish before its fetches settle (an [[instant]] task waits for a slow frame)', async () => {
		const id = await submit({ first_image: `${frames.url}/slow.png` });
		expect((await status(id)).status).not.toMatch(/SUCCESS|FAILURE/);
		expect(await mock.fetchedMedia(id)).toEqual([]);
		expect((await finished(id)).status).toBe('SUCCESS');
		expect((await mock.fetchedMedia(id))[0]).toMatchObject({ bytes: PNG.length, sha256: sha256Hex(PNG) });
	});

	test.each([
		['first_image', 'HTTP 404', '/missing.png', () => ({ first_image: `${frames.url}/missing.png?token=${SECRET}` })],
		[
			'last_image',
			'HTTP 302, a redirect (not followed)',
			'/moved.png',
			() => ({ last_image: [`${frames.url}/moved.png?token=${SECRET}`] }),
		],
		[
			'reference_images[1]',
			'empty body',
			'/empty.png',
			() => ({ reference_images: [`${frames.url}/frame.png`, `${frames.url}/empty.png?token=${SECRET}`] }),
		],
		[
			'first_image',
			'ECONNREFUSED',
			'refused',
			() => ({ first_image: `http://127.0.0.1:${refusedPort}/gone.png?token=${SECRET}` }),
		],
	])('%s failing (%s) ends the task FAILURE naming the field and the URL without its query', async (...row) => {
		const [label, problem, path, body] = row;
		const id = await submit(body());
		const end = await finished(id);
		expect(end.status).toBe('FAILURE');
		const where = path === 'refused' ? `http://127.0.0.1:${refusedPort}/gone.png` : `${frames.url}${path}`;
		expect(end.fail_reason).toBe(`${label}: could not fetch ${where} (${problem})`);
		expect(JSON.stringify(end)).not.toContain(SECRET);
		// A redirect is not followed.
		if (path === '/moved.png') expect(fetched('/frame.png')).toHaveLength(0);
		const failed = (await mock.fetchedMedia(id)).find((r) => r.error);
		expect(failed).toMatchObject({ error: problem });
	});

	test('URLs on other hosts are not fetched; the task succeeds as before', async () => {
		const id = await submit({
			first_image: 'https://example.com/frame.png',
			reference_images: ['http://example.com/r.png'],
		});
		expect((await finished(id)).status).toBe('SUCCESS');
		expect(await mock.fetchedMedia(id)).toEqual([]);
		expect(frames.requests).toHaveLength(0);
	});

	test("fetchMedia 'off' fetches nothing, even on loopback", async () => {
		expect((await mock.setLimits({ fetchMedia: 'off' })).fetchMedia).toBe('off');
		const id = await submit({ first_image: `${frames.url}/missing.png` });
		expect((await finished(id)).status).toBe('SUCCESS');
		expect(await mock.fetchedMedia(id)).toEqual([]);
		expect(frames.requests).toHaveLength(0);
	});
});

test("fetchMedia: a bad value is refused; 'off' reaches a mock process via spawnMockProcess({ limits })", async () => {
	const mock = await spawnMockProcess({ limits: { fetchMedia: 'off' } });
	try {
		expect((await (await fetch(`${mock.url}/__mock/limits`)).json()) as unknown).toMatchObject({ fetchMedia: 'off' });
		await expect(mock.setLimits({ fetchMedia: 'sometimes' as 'off' })).rejects.toThrow(
			/fetchMedia: 'loopback' or 'off'/,
		);
		await mock.setLimits({ fetchMedia: 'loopback' });
		await mock.reset();
		expect((await (await fetch(`${mock.url}/__mock/limits`)).json()) as unknown).toMatchObject({ fetchMedia: 'off' });
	} finally {
		await mock.stop();
	}
});
