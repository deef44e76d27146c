/**
 * Images are images: the Image node through n8n's engine against a service and a file host of the test's own. A URL
 * answering an HTML page, or b64_json that is not an image, fails with what came back (URLs kept); a data: URL is
 * decoded, not fetched; a file host's 403/404 gets a hint that fits a signed file URL, not the API key.
 */
import { createServer } from 'http';
import type { IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';

const API_KEY = 'sentinel-key-image-wire-8a7b';

/** A real (tiny) PNG: signature, IHDR, IDAT, IEND. */
const PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
	'base64',
);

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; url: string; requests: string[] }> {
	const requests: string[] = [];
	const server = createServer((req, res) => {
		req.resume();
		req.on('end', () => {
			requests.push(`${req.method} ${req.url} ${req.headers.authorization ? 'with key' : 'no key'}`);
			handler(req, res);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function close(server: Server): Promise<void> {
	server.closeAllConnections();
	await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The service answers the generation with `data` (built from the file host's URL); the file host with `file`. */
async function withServices(
	data: (fileHost: string) => IDataObject[],
	file: Handler,
	test: (s: { service: string[]; fileHost: string[]; serviceUrl: string }) => Promise<void>,
): Promise<void> {
	const host = await listen(file);
	const service = await listen((_req, res) => {
		res.writeHead(200, { 'Content-Type': 'application/json' });
		res.end(JSON.stringify({ created: 1, data: data(host.url) }));
	});
	try {
		await test({ service: service.requests, fileHost: host.requests, serviceUrl: service.url });
	} finally {
		await close(service.server);
		await close(host.server);
	}
}

const generate = { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'a fox', size: '256x256' };

const results: RunResult[] = [];
afterEach(async () => {
	while (results.length) await results.pop()!.cleanup();
});

async function run(baseUrl: string, continueOnFail = true): Promise<RunResult> {
	const result = await runWorkflow({
		nodes: [{ name: 'Image', type: 'genGatewayImage', parameters: generate, credentials: true, continueOnFail }],
		credentials: { baseUrl, apiKey: API_KEY },
	});
	results.push(result);
	return result;
}

const sendFile = (type: string, body: Buffer | string, status = 200): Handler => (_req, res) => {
	res.writeHead(status, { 'Content-Type': type });
	res.end(body);
};

describe('what came back is not an image', () => {
	it('an image URL answering 200 text/html (a login page): fails naming it, not retried, URLs kept', async () => {
		const page = '<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in to view this file</body></html>';
		await withServices(
			(host) => [{ url: `${host}/img/1.png?sig=abc` }],
			sendFile('text/html; charset=utf-8', page),
			async ({ serviceUrl, service, fileHost }) => {
				const result = await run(serviceUrl);
				const [item] = result.output();
				expect(item.binary).toBeUndefined();
				expect(item.json.error).toBe(
					'Image 1 is not an image: its URL answered 200 with an HTML page: "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in to view this file</body></html>" (Content-Type text/html)',
				);
				expect(item.json.imageUrls).toEqual([expect.stringMatching(/\/img\/1\.png\?sig=abc$/)]);
				expect(item.json.errorDescription).toMatch(/not a PNG, JPEG, WebP, GIF/);
				expect(service.filter((r) => r.startsWith('POST'))).toHaveLength(1);
				// The same URL gives the same page: asked once, and without the key (another host).
				expect(fileHost).toEqual(['GET /img/1.png?sig=abc no key']);
			},
		);
	});

	it.each([
		['JSON', Buffer.from('{"error":{"message":"content policy"}}').toString('base64'), /^Image 1 is not an image: its b64_json decodes to JSON: "\{"error":\{"message":"content policy"\}\}"$/],
		['text', Buffer.from('not an image at all').toString('base64'), /^Image 1 is not an image: its b64_json decodes to text: "not an image at all"$/],
		['unknown bytes', Buffer.from([0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0x10, 0x80, 0x00, 0x00]).toString('base64'), /^Image 1 is not an image: its b64_json decodes to 10 bytes of an unknown binary type \(starting 00 01 02 03 fe ff 10 80\)$/],
	])('b64_json that decodes to %s: fails naming it (was stored as an octet-stream "image")', async (_name, b64, message) => {
		await withServices(
			() => [{ b64_json: b64 }],
			sendFile('text/plain', 'unused'),
			async ({ serviceUrl }) => {
				const result = await run(serviceUrl);
				const [item] = result.output();
				expect(item.binary).toBeUndefined();
				expect(item.json.error).toMatch(message);
			},
		);
	});

	it('a real image still passes, by its bytes, whatever the Content-Type says', async () => {
		await withServices(
			(host) => [{ url: `${host}/img/1` }, { b64_json: PNG.toString('base64') }],
			sendFile('application/octet-stream', PNG),
			async ({ serviceUrl }) => {
				const result = await run(serviceUrl, false);
				expect(result.error).toBeUndefined();
				const items = result.output();
				expect(items).toHaveLength(2);
				for (const item of items) {
					expect(item.binary!.data).toMatchObject({ mimeType: 'image/png', fileName: expect.stringMatching(/^image-\d\.png$/) });
					expect((await result.readBinary(item)).equals(PNG)).toBe(true);
				}
			},
		);
	});
});

describe('a data: URL in "url"', () => {
	it('is decoded into the image, never fetched, and not copied into the JSON', async () => {
		await withServices(
			() => [{ url: `data:image/png;base64,${PNG.toString('base64')}`, revised_prompt: 'a red fox' }],
			sendFile('text/plain', 'unused'),
			async ({ serviceUrl, fileHost }) => {
				const result = await run(serviceUrl, false);
				expect(result.error).toBeUndefined();
				const [item] = result.output();
				expect(item.binary!.data).toMatchObject({ mimeType: 'image/png', fileName: 'image-1.png' });
				expect((await result.readBinary(item)).equals(PNG)).toBe(true);
				expect(item.json).toMatchObject({ revised_prompt: 'a red fox', index: 0 });
				expect(item.json.url).toBeUndefined();
				expect(fileHost).toEqual([]);
			},
		);
	});

	it('that holds no image fails like any other', async () => {
		await withServices(
			() => [{ url: 'data:text/html,%3Ch1%3EQuota%20exceeded%3C%2Fh1%3E' }],
			sendFile('text/plain', 'unused'),
			async ({ serviceUrl }) => {
				const [item] = (await run(serviceUrl)).output();
				expect(item.json.error).toBe('Image 1 is not an image: its data: URL holds XML or markup: "<h1>Quota exceeded</h1>" (Content-Type text/html)');
			},
		);
	});
});

describe('a file host refusing the download', () => {
	it.each([403, 404])('%i: a hint that fits a signed file URL (not the API key), URLs kept', async (status) => {
		await withServices(
			(host) => [{ url: `${host}/img/1.png?X-Amz-Expires=60&X-Amz-Signature=abc` }],
			sendFile('application/xml', '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>', status),
			async ({ serviceUrl }) => {
				const [item] = (await run(serviceUrl)).output();
				expect(item.json.error).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:\\d+/img/1\\.png failed with ${status}`));
				expect(item.json.errorDescription).toMatch(/signed file URLs expire/);
				expect(item.json.errorDescription).toMatch(/fetch any kept URL promptly/);
				expect(item.json.errorDescription).not.toMatch(/API key's permissions/);
				expect(item.json.imageUrls).toEqual([expect.stringContaining('/img/1.png?X-Amz-Expires=60')]);
			},
		);
	});
});
