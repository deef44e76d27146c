/** The Image node against the mock over loopback, through n8n-core's real engine. */
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { findSecret, sha256 } from '../support/videoRun';

const API_KEY = 'sentinel-key-image-1a2b3c4d';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: API_KEY });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const generate = (prompt: string, extra: IDataObject = {}) => ({
	operation: 'generate',
	model: { __rl: true, mode: 'id', value: 'img-1' },
	prompt,
	size: '256x256',
	...extra,
});

const results: RunResult[] = [];
afterEach(async () => {
	while (results.length) await results.pop()!.cleanup();
});

async function runImage(
	parameters: IDataObject,
	extra: Partial<HarnessNode> & {
		input?: IDataObject[];
		apiKey?: string;
		baseUrl?: string;
		binaryMode?: 'default' | 'filesystem';
	} = {},
): Promise<RunResult> {
	const { input, apiKey, baseUrl, binaryMode, ...node } = extra;
	const result = await runWorkflow({
		nodes: [{ name: 'Image', type: 'genGatewayImage', parameters, credentials: true, ...node }],
		input,
		binaryMode,
		credentials: { baseUrl: baseUrl ?? mock.url, apiKey: apiKey ?? mock.apiKey },
	});
	results.push(result);
	expect(findSecret(API_KEY, result.run, result.logs)).toEqual([]);
	return result;
}

/** The images the mock generated, by the ids it logged for the generation request. */
async function generatedImages(): Promise<Array<{ id: string; bytes: Buffer }>> {
	const post = (await mock.log()).find((entry) => entry.method === 'POST')!;
	const ids = post.outcome!.replace(/^images:/, '').split(',');
	return await Promise.all(
		ids.map(async (id) => ({ id, bytes: Buffer.from(await (await fetch(`${mock.url}/files/images/${id}.png`)).arrayBuffer()) })),
	);
}

describe('Generate as binary data', () => {
	it('decodes b64_json into a PNG binary, named and typed from the bytes', async () => {
		const result = await runImage(generate('a red fox', { options: { responseFormat: 'b64_json' } }));
		expect(result.error).toBeUndefined();
		const [item] = result.output();
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(item.binary!.data).toMatchObject({ mimeType: 'image/png', fileName: 'image-1.png', fileExtension: 'png' });
		expect(item.json).toMatchObject({ model: 'img-1', prompt: 'a red fox', index: 0, created: expect.any(Number) });
		expect(item.json.b64_json).toBeUndefined();
		const [image] = await generatedImages();
		expect((await result.readBinary(item)).equals(image.bytes)).toBe(true);
		const post = (await mock.log()).find((entry) => entry.method === 'POST')!;
		expect(post.body).toEqual({ model: 'img-1', prompt: 'a red fox', n: 1, size: '256x256', response_format: 'b64_json' });
	});

	it('downloads a url at once, streamed, with the bytes the mock served', async () => {
		for (const binaryMode of ['default', 'filesystem'] as const) {
			await mock.reset();
			const result = await runImage(generate('a blue whale'), { binaryMode });
			expect(result.error).toBeUndefined();
			const [item] = result.output();
			expect(item.binary!.data).toMatchObject({ mimeType: 'image/png', fileName: 'image-1.png' });
			expect(item.json.url).toMatch(/\/files\/images\/img_\w+\.png$/);
			const download = (await mock.log()).find((entry) => entry.method === 'GET')!;
			expect(download.path).toBe(new URL(item.json.url as string).pathname);
			const bytes = await result.readBinary(item);
			expect(sha256(bytes)).toBe(download.sha256);
			const [image] = await generatedImages();
			expect(bytes.equals(image.bytes)).toBe(true);
		}
	});

	it('gives one item per image by default, each with its own bytes and the input item paired', async () => {
		const result = await runImage(generate('three cats', { n: 3 }));
		const items = result.output();
		expect(items).toHaveLength(3);
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 0 }, { item: 0 }]);
		expect(items.map((item) => item.json.index)).toEqual([0, 1, 2]);
		expect(items.map((item) => item.binary!.data.fileName)).toEqual(['image-1.png', 'image-2.png', 'image-3.png']);
		const images = await generatedImages();
		for (let i = 0; i < 3; i++) expect((await result.readBinary(items[i])).equals(images[i].bytes)).toBe(true);
		expect(new Set(images.map((image) => sha256(image.bytes))).size).toBe(3);
	});

	it('puts all images on one item as data_0, data_1, … when asked', async () => {
		const result = await runImage(
			generate('two dogs', { n: 2, options: { outputMode: 'oneItem', binaryPropertyName: 'picture', responseFormat: 'b64_json' } }),
		);
		const items = result.output();
		expect(items).toHaveLength(1);
		expect(Object.keys(items[0].binary!)).toEqual(['picture_0', 'picture_1']);
		expect(items[0].json.images).toEqual([{ index: 0 }, { index: 1 }]);
		const images = await generatedImages();
		expect((await result.readBinary(items[0], 'picture_1')).equals(images[1].bytes)).toBe(true);
	});

	it('pairs the images of each input item with that item', async () => {
		const result = await runImage(generate('={{ $json.p }}', { n: 2 }), { input: [{ p: 'first' }, { p: 'second' }] });
		expect(result.output().map((item) => [item.json.prompt, item.pairedItem])).toEqual([
			['first', { item: 0 }],
			['first', { item: 0 }],
			['second', { item: 1 }],
			['second', { item: 1 }],
		]);
	});
});

describe('the image URL download and the key', () => {
	it('sends the key to the service base URL only: a URL on another host is fetched without it', async () => {
		// The mock names its URLs with 127.0.0.1; a credential on "localhost" makes them another origin.
		const foreign = await runImage(generate('foreign'), { baseUrl: mock.url.replace('127.0.0.1', 'localhost') });
		expect(foreign.error).toBeUndefined();
		const foreignGet = (await mock.log()).find((entry) => entry.method === 'GET')!;
		expect(foreignGet.authorized).toBe(false);
		expect(foreignGet.status).toBe(200);

		await mock.reset();
		await runImage(generate('same host'));
		const ownGet = (await mock.log()).find((entry) => entry.method === 'GET')!;
		expect(ownGet.authorized).toBe(true);
	});

	it('retries a download refused with 503 (a read is safe to repeat) without generating again', async () => {
		await mock.setFaults([{ method: 'GET', path: '^/files/images/', kind: 'status', status: 503, retryAfter: 0 }]);
		const result = await runImage(generate('retry me'), { baseUrl: mock.url.replace('127.0.0.1', 'localhost') });
		expect(result.error).toBeUndefined();
		const lines = (await mock.log()).map((entry) => `${entry.method} ${entry.status}`);
		expect(lines).toEqual(['POST 200', 'GET 503', 'GET 200']);
	});

	it('downloads again from the start when the body breaks mid-way', async () => {
		await mock.setFaults([{ method: 'GET', path: '^/files/images/', kind: 'cut-mid-body', afterBytes: 20 }]);
		const result = await runImage(generate('cut once'));
		expect(result.error).toBeUndefined();
		const gets = (await mock.log()).filter((entry) => entry.method === 'GET');
		expect(gets.map((entry) => entry.outcome ?? 'ok')).toEqual(['fault:cut-mid-body', 'ok']);
		expect(sha256(await result.readBinary(result.output()[0]))).toBe(gets[1].sha256);
	});

	it('a download that keeps breaking fails the item but keeps the paid image URLs in the error item', async () => {
		await mock.setFaults([{ method: 'GET', path: '^/files/images/', kind: 'cut-mid-body', times: -1, afterBytes: 20 }]);
		const result = await runImage(generate('cut me'), { continueOnFail: true });
		const [item] = result.output();
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(item.json.error).toMatch(/^Downloading image-1 failed: the connection broke before the whole file arrived/);
		expect(item.json.imageUrls).toEqual([expect.stringMatching(/\/files\/images\/img_\w+\.png$/)]);
		expect(item.json.errorDescription).toMatch(/^Tried 3 times\. The images were generated \(and may be charged\)/);
		const lines = (await mock.log()).map((entry) => entry.method);
		expect(lines).toEqual(['POST', 'GET', 'GET', 'GET']);
	});
});

describe('Return As: URL or Base64 as returned', () => {
	it('returns the url entries untouched, and downloads nothing', async () => {
		const result = await runImage(generate('as url', { n: 2, returnAs: 'returned' }));
		const items = result.output();
		expect(items.map((item) => item.json.url)).toEqual([
			expect.stringMatching(/\/files\/images\/img_\w+\.png$/),
			expect.stringMatching(/\/files\/images\/img_\w+\.png$/),
		]);
		expect(items.every((item) => item.binary === undefined)).toBe(true);
		expect((await mock.log()).filter((entry) => entry.method === 'GET')).toHaveLength(0);
	});

	it('returns b64_json as sent; all on one item when asked', async () => {
		const result = await runImage(
			generate('as base64', { n: 2, returnAs: 'returned', options: { responseFormat: 'b64_json', outputMode: 'oneItem' } }),
		);
		const [item] = result.output();
		const images = item.json.images as Array<{ index: number; b64_json: string }>;
		expect(images.map((image) => image.index)).toEqual([0, 1]);
		const generated = await generatedImages();
		expect(Buffer.from(images[1].b64_json, 'base64').equals(generated[1].bytes)).toBe(true);
	});
});

describe('errors', () => {
	it('400: the service message; nothing downloaded', async () => {
		const result = await runImage(generate('too big', { size: '1792x1024' }));
		const error = result.nodeError('Image') as Error & { httpCode?: string; description?: string };
		expect(error.message).toMatch(/^POST \/v1\/images\/generations failed with 400: size: /);
		expect(error.httpCode).toBe('400');
		expect(error.description).toMatch(/invalid/);
		expect((await mock.log()).map((entry) => entry.method)).toEqual(['POST']);
	});

	it('403: wrong key, with the permission hint, as an error item under Continue On Fail', async () => {
		const result = await runImage(generate('x'), { apiKey: 'wrong-key-image-000', continueOnFail: true });
		expect(result.output()).toEqual([
			{
				json: {
					error: expect.stringMatching(/failed with 403: invalid or missing API key/),
					errorDescription: expect.stringMatching(/permissions/),
					httpCode: '403',
				},
				pairedItem: { item: 0 },
			},
		]);
		expect(findSecret('wrong-key-image-000', result.run, result.logs)).toEqual([]);
	});

	it('429: retried after Retry-After, then one generation', async () => {
		await mock.setFaults([{ method: 'POST', path: '^/v1/images/generations$', kind: 'status', status: 429, retryAfter: 1 }]);
		const result = await runImage(generate('patient'));
		expect(result.error).toBeUndefined();
		expect((await mock.log()).map((entry) => `${entry.method} ${entry.status}`)).toEqual(['POST 429', 'POST 200', 'GET 200']);
	});

	it('a generation whose answer is lost is not resent (it may be charged)', async () => {
		await mock.setFaults([{ method: 'POST', path: '^/v1/images/generations$', kind: 'cut-after-accept' }]);
		const error = (await runImage(generate('lost'))).nodeError('Image')!;
		expect(error.message).toMatch(/outcome of POST \/v1\/images\/generations is unknown/);
		expect((await mock.log()).filter((entry) => entry.method === 'POST')).toHaveLength(1);
	});
});
