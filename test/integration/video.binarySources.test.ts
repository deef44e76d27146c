// Time: about 15 s on the shared 2-core machine (one mock process; one retry test waits 2 s between tries).
/**
 * Issue 32 through n8n's engine (filesystem binary mode, as n8n 2.x): frames and references from binary fields of
 * the input item are sent as signed n8n URLs (`<n8n>/rest/binary-data/signed?token=<JWT>` naming the binary's id),
 * reported in `binary_urls`, and checked before anything is paid: a missing field, bytes of the wrong kind, too many
 * references, n8n's binary data in memory, and an n8n URL a public service cannot reach are refused with zero POSTs.
 * Retry On Fail after an unknown outcome does not pay twice although each try signs new URLs.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunOptions, RunResult } from '../harness/engine';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams } from '../support/faultTable';
import { postsTo, resetConnection, sendJson, startScriptedServer } from '../support/scriptedServer';
import { findSecret, videoRunOptions } from '../support/videoRun';

jest.setTimeout(30_000);

const API_KEY = 'sentinel-key-binary-sources-3c2d1e';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(600, 7)]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(600, 1)]);
const HTML = Buffer.from('<!doctype html><html><head><title>Sign in</title></head><body>Log in</body></html>');

interface File {
	field: string;
	bytes: Buffer;
	mimeType: string;
	fileName: string;
}

const files = (...list: Array<File & { size?: number }>) =>
	JSON.stringify(list.map((f) => ({ ...f, bytes: f.bytes.toString('base64') })));
const MB = 1024 * 1024;
const png = (field: string): File => ({ field, bytes: PNG, mimeType: 'image/png', fileName: `${field}.png` });

/** Puts the binary fields it is given on its one item, as a Form Trigger or Read File would. */
const binarySource: INodeType = {
	description: {
		...{ displayName: 'Binary Source', name: 'videoBinarySource', defaults: { name: 'Binary Source' } },
		...{ group: ['transform'], version: 1, description: 'Test: one item with binary data' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [{ displayName: 'Files', name: 'files', type: 'string', default: '[]' }],
	},
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const list = JSON.parse(this.getNodeParameter('files', 0) as string) as Array<Record<string, string>>;
		const binary: INodeExecutionData['binary'] = {};
		for (const file of list) {
			// `size`: a PNG of that many bytes, built here (not carried through the parameter as base64).
			const bytes = file.size ? Buffer.concat([PNG, Buffer.alloc(Number(file.size) - PNG.length)]) : undefined;
			binary[file.field] = await this.helpers.prepareBinaryData(
				bytes ?? Buffer.from(file.bytes, 'base64'),
				file.fileName,
				file.mimeType,
			);
		}
		return [[{ json: {}, binary, pairedItem: { item: 0 } }]];
	},
};

let mock: MockClient;
beforeAll(async () => {
	// The harness serves no n8n at 127.0.0.1:5678: the mock does not fetch (the e2e run proves the URL serves the bytes).
	mock = await spawnMockProcess({ apiKey: API_KEY, limits: { fetchMedia: 'off' } });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const special = (extra: IDataObject) =>
	generateParams('a fox', { model: 'sd_2.0_fast_special', waitForCompletion: false, ...extra });

function withSource(options: RunOptions, source: string, binaryMode: RunOptions['binaryMode'] = 'filesystem'): RunOptions {
	return {
		...options,
		binaryMode,
		nodes: [{ name: 'Source', type: 'videoBinarySource', parameters: { files: source } }, ...options.nodes],
		extraNodeTypes: [binarySource],
	};
}

async function run(parameters: IDataObject, source: string, extra: Partial<RunOptions> = {}): Promise<RunResult> {
	return await runWorkflow({ ...withSource(videoRunOptions(mock, parameters), source), ...extra });
}

const posts = async () => (await mock.log()).filter((entry) => entry.method === 'POST');
const SIGNED = /^http:\/\/127\.0\.0\.1:5678\/rest\/binary-data\/signed\?token=([\w-]+\.[\w-]+\.[\w-]+)$/;

/** The binary id a signed URL's token names, checked with n8n's own signing secret. */
function signedId(url: string): string {
	const token = SIGNED.exec(url)?.[1];
	if (!token) throw new Error(`not a signed n8n URL: ${url}`);
	return Container.get(BinaryDataService).validateSignedToken(token);
}

describe('frames and references from binary fields', () => {
	it('first frame, last frame and two reference images: signed URLs naming each binary, binary_urls, valid for Max Wait', async () => {
		const parameters = special({
			firstImageSource: 'binary',
			lastImageSource: 'binary',
			lastImageBinaryField: 'last',
			referenceImagesSource: 'binary',
			referenceImagesBinaryField: 'refA, refB',
			referenceVideosSource: 'binary',
			referenceVideosBinaryField: 'clip',
			options: { pollInterval: 1, maxWait: 2 },
		});
		const source = files(png('data'), png('last'), png('refA'), png('refB'), {
			field: 'clip',
			bytes: MP4,
			mimeType: 'application/octet-stream',
			fileName: 'clip.mp4',
		});
		const before = Date.now();
		const result = await run(parameters, source);
		expect(result.error).toBeUndefined();
		const input = result.output('Source')[0].binary!;
		const [post] = await posts();
		const body = post.body as Record<string, unknown>;
		expect(signedId(body.first_image as string)).toBe(input.data.id);
		expect(signedId(body.last_image as string)).toBe(input.last.id);
		expect((body.reference_images as string[]).map(signedId)).toEqual([input.refA.id, input.refB.id]);
		expect((body.reference_videos as string[]).map(signedId)).toEqual([input.clip.id]);

		const json = result.output('Video')[0].json;
		expect(json.request).toEqual(body);
		const urls = json.binary_urls as IDataObject[];
		expect(urls.map(({ parameter, binary_field, file_name, mime_type, bytes }) => ({ parameter, binary_field, file_name, mime_type, bytes }))).toEqual([
			{ parameter: 'firstImage', binary_field: 'data', file_name: 'data.png', mime_type: 'image/png', bytes: PNG.length },
			{ parameter: 'lastImage', binary_field: 'last', file_name: 'last.png', mime_type: 'image/png', bytes: PNG.length },
			{ parameter: 'referenceImages', binary_field: 'refA', file_name: 'refA.png', mime_type: 'image/png', bytes: PNG.length },
			{ parameter: 'referenceImages', binary_field: 'refB', file_name: 'refB.png', mime_type: 'image/png', bytes: PNG.length },
			// The type from the bytes, not the label.
			{ parameter: 'referenceVideos', binary_field: 'clip', file_name: 'clip.mp4', mime_type: 'video/mp4', bytes: MP4.length },
		]);
		expect(urls.map((entry) => entry.url)).toEqual([
			body.first_image,
			body.last_image,
			...(body.reference_images as string[]),
			...(body.reference_videos as string[]),
		]);
		// Max Wait 2 minutes: the token expires then (whole seconds), and no later.
		for (const entry of urls) {
			const expires = Date.parse(entry.expires_at as string);
			expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 120_000);
			expect(expires).toBeLessThanOrEqual(Date.now() + 120_000);
		}
		expect(findSecret(API_KEY, json, result.logs)).toEqual([]);
	});

	it('a URL field keeps working beside a binary one (saved workflows without a source read URL)', async () => {
		const result = await run(
			special({ firstImage: 'https://example.com/first.png', lastImageSource: 'binary' }),
			files(png('data')),
		);
		expect(result.error).toBeUndefined();
		const body = (await posts())[0].body as Record<string, unknown>;
		expect(body.first_image).toBe('https://example.com/first.png');
		expect(signedId(body.last_image as string)).toBe(result.output('Source')[0].binary!.data.id);
		expect((result.output('Video')[0].json.binary_urls as IDataObject[]).map((e) => e.parameter)).toEqual(['lastImage']);
	});

	it('waited for and downloaded: the finished item keeps binary_urls beside the video', async () => {
		const result = await run(
			generateParams('a fox', { model: 'sd_2.0_fast_special', firstImageSource: 'binary', binaryPropertyName: 'video' }),
			files(png('data')),
		);
		expect(result.error).toBeUndefined();
		const [item] = result.output('Video');
		expect(item.json.status).toBe('SUCCESS');
		expect((item.json.binary_urls as IDataObject[]).map((e) => [e.parameter, e.binary_field])).toEqual([
			['firstImage', 'data'],
		]);
		expect(item.binary?.video?.mimeType).toBe('video/mp4');
	});
});

describe('refused before anything is paid (zero POSTs)', () => {
	it.each<[string, IDataObject, string, RegExp]>([
		[
			'an HTML page labelled image/png',
			{ firstImageSource: 'binary' },
			files({ field: 'data', bytes: HTML, mimeType: 'image/png', fileName: 'a.png' }),
			/^Invalid video request: firstImageBinaryField: binary field "data" is not an image \(image\/png; its bytes are an HTML page: .*\(model sd_2\.0_fast_special\)$/,
		],
		[
			'a field the item does not have: the fields it has are named',
			{ firstImageSource: 'binary', firstImageBinaryField: 'picture' },
			files(png('data'), png('second')),
			/^Invalid video request: firstImageBinaryField: the input item has no binary field "picture"; its binary fields: data, second \(model sd_2\.0_fast_special\)$/,
		],
		[
			'an item without binary data',
			{ lastImageSource: 'binary' },
			files(),
			/lastImageBinaryField: the input item has no binary field "data"; it has no binary data/,
		],
		[
			'an image over 20 MB (its recorded size, before it is read)',
			{ referenceImagesSource: 'binary', referenceImagesBinaryField: 'small, big' },
			files(png('small'), { ...png('big'), size: 20 * MB + 1 }),
			/^Invalid video request: referenceImagesBinaryField: binary field "big" is too big: 20\.0 MB \(20971521 bytes\); allowed: at most 20 MB for reference images \(model sd_2\.0_fast_special\)$/,
		],
		[
			'more reference videos than the model takes',
			{ referenceVideosSource: 'binary', referenceVideosBinaryField: 'a, b, c, d' },
			files(png('a')),
			/^Invalid video request: referenceVideosBinaryField: 4 reference videos given; allowed: at most 3 \(model sd_2\.0_fast_special\)$/,
		],
		[
			'an image as a reference video',
			{ referenceVideosSource: 'binary', referenceVideosBinaryField: 'data' },
			files(png('data')),
			/referenceVideosBinaryField: binary field "data" is not a video \(image\/png; its bytes are a image\/png file\)/,
		],
		[
			'a frame for a model without frames (the model from an expression: n8n shows every field)',
			{ model: "={{ 'sd_2.0_fast_discount' }}", firstImageSource: 'binary' },
			files(png('data')),
			/firstImageBinaryField: this model does not support a first frame; leave it empty \(model sd_2\.0_fast_discount\)/,
		],
	])('%s', async (_, extra, source, pattern) => {
		const result = await run(special(extra), source);
		expect(result.nodeError('Video')?.message).toMatch(pattern);
		expect(await posts()).toEqual([]);
	});

	it("a service on a public host and n8n on loopback: names both addresses and n8n 2.x's setting, never the token", async () => {
		const options = videoRunOptions(mock, special({ firstImageSource: 'binary' }));
		const result = await runWorkflow({
			...withSource(options, files(png('data'))),
			credentials: { baseUrl: 'https://api.example.com/v1', apiKey: API_KEY },
		});
		const error = result.nodeError('Video') as Error & { description?: string };
		expect(error.message).toBe(
			'firstImage: the service cannot fetch binary field "data": n8n would serve it at http://127.0.0.1:5678 (a ' +
				'loopback address), which the service at https://api.example.com (a public host) cannot reach; set ' +
				"N8N_WEBHOOK_URL to n8n's public URL",
		);
		expect(error.description).toContain('Nothing was sent');
		expect(error.description).toContain('N8N_EDITOR_BASE_URL does not change it');
		expect(`${error.message} ${error.description}`).not.toContain('token');
		expect(await posts()).toEqual([]);
	});

	it("n8n's binary data in memory (n8n 1.x's default): names N8N_DEFAULT_BINARY_DATA_MODE=filesystem", async () => {
		const options = withSource(videoRunOptions(mock, special({ firstImageSource: 'binary' })), files(png('data')), 'default');
		const result = await runWorkflow(options);
		const error = result.nodeError('Video') as Error & { description?: string };
		expect(error.message).toMatch(/firstImageBinaryField: binary field "data" of item 0 is held in memory .*N8N_DEFAULT_BINARY_DATA_MODE=filesystem/);
		expect(error.description).toMatch(/N8N_DEFAULT_BINARY_DATA_MODE=filesystem/);
		expect(await posts()).toEqual([]);
	});
});

describe('Retry On Fail after an unknown outcome pays once with a binary frame', () => {
	it('a reset after the submission was sent: 3 tries a second apart (new tokens each), 1 POST', async () => {
		const server = await startScriptedServer((_req, res) => resetConnection(res));
		try {
			const options = videoRunOptions(mock, special({ firstImageSource: 'binary' }), {
				retryOnFail: true,
				maxTries: 3,
				// Over a second apart: each try signs a token with another issue time (iat), so another URL.
				waitBetweenTries: 1100,
			});
			const result = await runWorkflow({
				...withSource(options, files(png('data'))),
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(result.tries('Video')).toBe(3);
			expect(result.nodeError('Video')!.message).toMatch(/unknown/);
			expect(postsTo(server, '/v1/tasks/vendor')).toHaveLength(1);
		} finally {
			await server.close();
		}
	});
});

describe('A signed URL is issued right before its POST (issue 37, point 2)', () => {
	it('a submission held by a 429 signs its frame anew when it goes out, valid for Max Wait from then', async () => {
		const arrivals: number[] = [];
		const server = await startScriptedServer((_req, res) => {
			arrivals.push(Date.now());
			// Over a second: the token signed for the second POST has another issue time (iat), so another URL.
			if (arrivals.length === 1) return sendJson(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '1.2' });
			sendJson(res, 200, { task_id: 'task_frame' });
		});
		try {
			const options = videoRunOptions(mock, special({ firstImageSource: 'binary', options: { maxWait: 2 } }));
			const result = await runWorkflow({
				...withSource(options, files(png('data'))),
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(result.error).toBeUndefined();
			const [held, sent] = postsTo(server, '/v1/tasks/vendor').map((post) => JSON.parse(post.body) as IDataObject);
			expect(sent.first_image).not.toBe(held.first_image);
			expect(signedId(sent.first_image as string)).toBe(result.output('Source')[0].binary!.data.id);
			// What the output reports is what the service got, valid for Max Wait (2 min) from the POST that went out.
			const json = result.output('Video')[0].json;
			expect(json.request).toEqual(sent);
			const [url] = json.binary_urls as IDataObject[];
			expect(url.url).toBe(sent.first_image);
			expect(Date.parse(url.expires_at as string)).toBeGreaterThanOrEqual(Math.floor(arrivals[1] / 1000) * 1000 + 119_000);
		} finally {
			await server.close();
		}
	});
});
