// Time: about 18 s on the shared 2-core machine (images of 20–21 MB are built, stored, and refused unread).
/**
 * Images in Chat messages, through n8n's engine against a loopback server of the test's own: the exact bytes both
 * operations send for images by URL and from a binary field (a `data:` URL), the checks made before anything is sent
 * (size limit, not an image, no source given: zero requests), and a model that refuses images (the service's message
 * and the hint, one request). Issue 28: URLs checked like Video's references (CDN URLs with commas stay whole;
 * file://, javascript:, paths, user:pass@, oversized or non-image data: URLs refused), bytes sniffed (HTML labelled
 * image/png refused), and an oversized binary refused from n8n's metadata before it is read.
 */
import { createServer } from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import { BinaryDataService } from 'n8n-core';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';

jest.setTimeout(30_000);

const MB = 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A small "PNG": the signature and some bytes (the node reads the type from the label or the signature only). */
const png = (size: number) => Buffer.concat([PNG_SIGNATURE, Buffer.alloc(Math.max(0, size - 8), 7)]);

/** Puts binary field `data` (and `second`) on its one item, as the Image node or Read File would. */
const binarySource: INodeType = {
	description: {
		...{ displayName: 'Binary Source', name: 'chatImagesBinarySource', defaults: { name: 'Binary Source' } },
		...{ group: ['transform'], version: 1, description: 'Test: one item with binary data' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Size', name: 'size', type: 'number', default: 64 },
			{ displayName: 'MIME Type', name: 'mimeType', type: 'string', default: 'image/png' },
			{ displayName: 'Plain Bytes', name: 'plain', type: 'boolean', default: false },
			{ displayName: 'Bytes', name: 'text', type: 'string', default: '' },
		],
	},
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const size = this.getNodeParameter('size', 0) as number;
		const mimeType = this.getNodeParameter('mimeType', 0) as string;
		const text = this.getNodeParameter('text', 0) as string;
		const plain = this.getNodeParameter('plain', 0) ? Buffer.alloc(size, 0x25) : png(size);
		const bytes = text ? Buffer.from(text) : plain;
		const data = await this.helpers.prepareBinaryData(bytes, 'picture.png', mimeType);
		const second = await this.helpers.prepareBinaryData(png(16), 'second.png', 'image/png');
		return [[{ json: {}, binary: { data, second }, pairedItem: { item: 0 } }]];
	},
};

interface Served {
	url: string;
	bodies: string[];
}

/** Answers every POST with `answer`, keeping each request body exactly as received. */
async function withServer(answer: { status: number; body: unknown }, test: (s: Served) => Promise<void>): Promise<void> {
	const bodies: string[] = [];
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			if (req.method === 'POST') bodies.push(Buffer.concat(chunks).toString('utf8'));
			res.writeHead(answer.status, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(answer.body));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		await test({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies });
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}

const COMPLETION = { id: 'c1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'A fox.' }, finish_reason: 'stop' }] };
const RESPONSE = { id: 'r1', object: 'response', status: 'completed', model: 'm', output_text: 'A fox.', output: [] };

const model = { __rl: true, mode: 'id', value: 'm' };
const chat = (entry: IDataObject) => ({ operation: 'message', model, messages: { values: [entry] } });
const responses = (entry: IDataObject) => ({ operation: 'response', model, input: { values: [entry] } });

async function run(
	parameters: IDataObject,
	baseUrl: string,
	source?: IDataObject,
	binaryMode: 'default' | 'filesystem' = 'default',
): Promise<RunResult> {
	return await runWorkflow({
		binaryMode,
		nodes: [
			...(source ? [{ name: 'Source', type: 'chatImagesBinarySource', parameters: source }] : []),
			{ name: 'Chat', type: 'genGatewayChat', parameters, credentials: true },
		],
		credentials: { baseUrl, apiKey: 'sentinel-key-images-8a1b' },
		extraNodeTypes: [binarySource],
	});
}

const dataUrl = (bytes: Buffer) => `data:image/png;base64,${bytes.toString('base64')}`;

/** The one request the server saw is, byte for byte, `body` as JSON (n8n sends JSON.stringify's bytes). */
const expectSentOnce = (server: Served, body: IDataObject) => expect(server.bodies).toEqual([JSON.stringify(body)]);
const user = (...content: IDataObject[]) => ({ role: 'user', content });

describe('the bytes sent for images', () => {
	const inline = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
	const urls = { imageSource: 'url', imageUrls: `https://example.com/a.png,\nhttps://example.com/b.jpg ${inline}` };

	it('Message a Model, by URL: text part first, then one image_url part per URL (a data: URL too) with the detail asked for', async () => {
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const result = await run(chat({ role: 'user', content: 'What is this?', ...urls, imageDetail: 'low' }), server.url);
			expect(result.error).toBeUndefined();
			const image = (url: string) => ({ type: 'image_url', image_url: { url, detail: 'low' } });
			expectSentOnce(server, {
				model: 'm',
				messages: [
					user(
						{ type: 'text', text: 'What is this?' },
						image('https://example.com/a.png'),
						image('https://example.com/b.jpg'),
						image(inline),
					),
				],
			});
			expect(result.output()[0].json.content).toBe('A fox.');
		});
	});

	it('Message a Model, from binary fields: data: URLs (type read from the bytes when labelled generically), detail auto left out', async () => {
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const entry = { role: 'user', content: '', imageSource: 'binary', binaryPropertyName: 'data, second' };
			const result = await run(chat(entry), server.url, { size: 300, mimeType: 'application/octet-stream' });
			expect(result.error).toBeUndefined();
			const image = (bytes: Buffer) => ({ type: 'image_url', image_url: { url: dataUrl(bytes) } });
			expectSentOnce(server, { model: 'm', messages: [user(image(png(300)), image(png(16)))] });
		});
	});

	it('Create a Response, by URL and from a binary field: input_text then input_image parts, detail always sent', async () => {
		await withServer({ status: 200, body: RESPONSE }, async (server) => {
			const parameters = {
				...responses({ role: 'user', content: 'Describe it', imageSource: 'binary', imageDetail: 'high' }),
				instructions: 'Be brief',
			};
			(parameters.input as { values: IDataObject[] }).values.unshift({ role: 'user', content: 'And this one', ...urls });
			const result = await run(parameters, server.url, { size: 100 });
			expect(result.error).toBeUndefined();
			const image = (url: string, detail = 'auto') => ({ type: 'input_image', image_url: url, detail });
			const text = (words: string) => ({ type: 'input_text', text: words });
			expectSentOnce(server, {
				model: 'm',
				input: [
					user(text('And this one'), image('https://example.com/a.png'), image('https://example.com/b.jpg'), image(inline)),
					user(text('Describe it'), image(dataUrl(png(100)), 'high')),
				],
				instructions: 'Be brief',
			});
			expect(result.output()[0].json.content).toBe('A fox.');
		});
	});

	it('a message without images, and image fields on a non-user message, send the content as a plain string', async () => {
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const parameters = chat({ role: 'assistant', content: 'Earlier answer', ...urls });
			(parameters.messages.values as IDataObject[]).push({ role: 'user', content: 'hi', imageSource: 'none' });
			expect((await run(parameters, server.url)).error).toBeUndefined();
			expectSentOnce(server, {
				model: 'm',
				messages: [
					{ role: 'assistant', content: 'Earlier answer' },
					{ role: 'user', content: 'hi' },
				],
			});
		});
	});
});

describe('checked before anything is sent (zero requests)', () => {
	it.each([
		[
			'an image over 20 MB',
			{ size: 20 * MB + 1 },
			'Input binary field "data" of item 0 (Messages › Message 1) is too big: 20.0 MB (20971521 bytes), the limit is 20 MB',
			/at most 20 MB \(20971520 bytes\)\. Nothing was sent/,
		],
		[
			'binary data that is not an image',
			{ size: 100, mimeType: 'application/pdf', plain: true },
			'Input binary field "data" of item 0 (Messages › Message 1) is not an image (application/pdf; its bytes are ' +
				`text: "${'%'.repeat(100)}")`,
			/PNG, JPEG, GIF, WebP\)\. Nothing was sent/,
		],
		[
			'a binary field the item does not have',
			{ size: 100, binaryPropertyName: 'picture' },
			"The item has no binary field 'picture' [item 0]",
			/binary field name/,
		],
	])('%s', async (_name, source, message, description) => {
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const { binaryPropertyName = 'data', ...sourceParameters } = source as IDataObject;
			const entry = { role: 'user', content: 'What is this?', imageSource: 'binary', binaryPropertyName };
			const result = await run(chat(entry), server.url, sourceParameters);
			const error = result.nodeError('Chat') as Error & { description?: string };
			expect(error.message).toBe(message);
			expect(error.description).toMatch(description);
			expect(server.bodies).toHaveLength(0);
		});
	});

	it('Images "From URL(s)" with no URL fails and says which message', async () => {
		await withServer({ status: 200, body: RESPONSE }, async (server) => {
			const result = await run(responses({ role: 'user', content: 'x', imageSource: 'url', imageUrls: ' ' }), server.url);
			expect(result.nodeError('Chat')?.message).toBe('Input › Message 1: "Image URL(s)" is empty');
			expect(server.bodies).toHaveLength(0);
		});
	});
});

describe('a model that refuses images', () => {
	const refusal = {
		error: {
			message: 'Invalid content type. image_url is only supported by certain models.',
			type: 'invalid_request_error',
			param: 'messages.[0].content.[1].type',
			code: null,
		},
	};
	it.each([
		['Message a Model', chat, '/v1/chat/completions'],
		['Create a Response', responses, '/v1/responses'],
	])('%s: the service message and the hint, sent once', async (_name, parameters, path) => {
		await withServer({ status: 400, body: refusal }, async (server) => {
			const result = await run(parameters({ role: 'user', content: 'x', imageSource: 'url', imageUrls: 'https://example.com/a.png' }), server.url);
			const error = result.nodeError('Chat') as Error & { description?: string; httpCode?: string };
			expect(error.message).toBe(`POST ${path} failed with 400: ${refusal.error.message}`);
			expect(error.description).toMatch(/rejected the request as invalid/);
			expect(server.bodies).toHaveLength(1);
		});
	});
});

describe('issue 28: image URLs checked like Video references, bytes sniffed, sizes known before reading', () => {
	const urlEntry = (imageUrls: string | Array<string | number>) => ({
		...{ role: 'user', content: 'What is this?' },
		...{ imageSource: 'url', imageUrls },
	});
	const sentUrls = (server: Served) =>
		(JSON.parse(server.bodies[0]) as { messages: Array<{ content: IDataObject[] }> }).messages[0].content
			.filter((part) => part.type === 'image_url')
			.map((part) => (part.image_url as IDataObject).url);

	it('an image-CDN URL with commas is sent whole; a saved comma-separated list still gives one per URL', async () => {
		const cdn = 'https://res.cloudinary.example/demo/image/upload/w_200,h_100,c_fill/a.png';
		const inline = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const text = `${cdn}, https://example.com/b.jpg,https://example.com/c,d.jpg,${inline}\nhttps://example.com/e.png`;
			expect((await run(chat(urlEntry(text)), server.url)).error).toBeUndefined();
			expect(sentUrls(server)).toEqual([
				cdn,
				'https://example.com/b.jpg',
				'https://example.com/c,d.jpg',
				inline,
				'https://example.com/e.png',
			]);
		});
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			// A list from an expression: each entry is one URL, never split.
			expect((await run(chat(urlEntry([cdn, 'https://example.com/x,y.png'])), server.url)).error).toBeUndefined();
			expect(sentUrls(server)).toEqual([cdn, 'https://example.com/x,y.png']);
		});
	});

	const MB21 = dataUrl(png(21 * MB));
	it.each([
		['a file:// URL', 'file:///etc/passwd', '"file:///etc/passwd" is not an HTTP(S) URL'],
		['a javascript: URL', 'javascript:alert(1)', '"javascript:alert(1)" is not an HTTP(S) URL'],
		['a bare path', '/home/me/photo.png', '"/home/me/photo.png" is not an HTTP(S) URL'],
		['a file name', 'photo.png', '"photo.png" is not an HTTP(S) URL'],
		['a URL without slashes', 'https:example.com/a.png', '"https:example.com/a.png" is not an HTTP(S) URL'],
		[
			'a URL with a user name and password (redacted in the error)',
			'https://me:hunter2-secret@example.com/a.png',
			'"https://***@example.com/a.png" contains a user name or password',
		],
		[
			'an oversized data: URL (21 MB)',
			MB21,
			`"${MB21.slice(0, 57)}..." (${MB21.length} characters) holds 21.0 MB ` +
				'(22020096 bytes); an image may be at most 20 MB',
		],
		[
			'a data: URL of a non-image type',
			`data:text/html;base64,${Buffer.from('<html><body>hi</body></html>').toString('base64')}`,
			'is a data: URL of type text/html, not of an image type (image/…)',
		],
		[
			'a data: URL labelled image/png whose bytes are HTML',
			`data:image/png;base64,${Buffer.from('<!doctype html><title>Login</title>').toString('base64')}`,
			'is labelled image/png, but its bytes are an HTML page: "<!doctype html><title>Login</title>"',
		],
		['a data: URL with no type', 'data:,hello', '"data:,hello" is a data: URL of no type, not of an image type'],
	])('%s is refused before anything is sent', async (_name, url, refusal) => {
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const entry = urlEntry(`https://example.com/ok.png\n${url}`);
			const result = await run(chat(entry), server.url);
			const error = result.nodeError('Chat') as Error & { description?: string };
			expect(error.message).toContain('Messages › Message 1: "Image URL(s)" entry 2: ');
			expect(error.message).toContain(refusal);
			expect(error.message.length).toBeLessThan(400);
			expect(error.message).not.toContain('hunter2');
			expect(error.description).toMatch(/http:\/\/ or https:\/\/ URL .* or a data: URL of an image .* at most 20 MB/);
			expect(error.description).toMatch(/Nothing was sent\.$/);
			expect(server.bodies).toHaveLength(0);
		});
	});

	it('a list entry that is not text is refused (Create a Response too)', async () => {
		await withServer({ status: 200, body: RESPONSE }, async (server) => {
			const result = await run(responses(urlEntry(['https://example.com/a.png', 42])), server.url);
			const message = 'Input › Message 1: "Image URL(s)" entry 2: 42 is not a URL (text)';
			expect(result.nodeError('Chat')?.message).toBe(message);
			expect(server.bodies).toHaveLength(0);
		});
	});

	const HTML = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please log in</body></html>';
	it.each(['default', 'filesystem'] as const)(
		'binary data labelled image/png whose bytes are HTML is refused, with what it is (%s binary mode)',
		async (mode) => {
			await withServer({ status: 200, body: COMPLETION }, async (server) => {
				const entry = { role: 'user', content: 'x', imageSource: 'binary', binaryPropertyName: 'data' };
				const result = await run(chat(entry), server.url, { text: HTML, mimeType: 'image/png' }, mode);
				try {
					const error = result.nodeError('Chat') as Error & { description?: string };
					expect(error.message).toBe(
						'Input binary field "data" of item 0 (Messages › Message 1) is not an image (image/png; its bytes are an ' +
							'HTML page: "<!DOCTYPE html> <html><head><title>Sign in</title></head><body>Please log in</body></html>")',
					);
					expect(error.description).toMatch(/a page or a message saved as a file is not one/);
					expect(server.bodies).toHaveLength(0);
				} finally {
					await result.cleanup();
				}
			});
		},
	);

	it.each(['default', 'filesystem'] as const)(
		'an image over 20 MB is refused from n8n\'s binary metadata before any of it is read (%s binary mode)',
		async (mode) => {
			const reads = [
				jest.spyOn(BinaryDataService.prototype, 'getAsBuffer'),
				jest.spyOn(BinaryDataService.prototype, 'getAsStream'),
			];
			try {
				await withServer({ status: 200, body: COMPLETION }, async (server) => {
					const entry = { role: 'user', content: 'x', imageSource: 'binary', binaryPropertyName: 'data' };
					const result = await run(chat(entry), server.url, { size: 20 * MB + 1 }, mode);
					try {
						expect(result.nodeError('Chat')?.message).toBe(
							'Input binary field "data" of item 0 (Messages › Message 1) is too big: 20.0 MB (20971521 bytes), ' +
								'the limit is 20 MB',
						);
						expect(reads.map((spy) => spy.mock.calls.length)).toEqual([0, 0]);
						expect(server.bodies).toHaveLength(0);
					} finally {
						await result.cleanup();
					}
				});
			} finally {
				for (const spy of reads) spy.mockRestore();
			}
		},
	);

	it.each([300, 300_000])('filesystem binary mode: an image of %i bytes is sent exactly', async (size) => {
		await withServer({ status: 200, body: COMPLETION }, async (server) => {
			const entry = { role: 'user', content: '', imageSource: 'binary', binaryPropertyName: 'data, second' };
			const result = await run(chat(entry), server.url, { size, mimeType: 'application/octet-stream' }, 'filesystem');
			try {
				expect(result.error).toBeUndefined();
				const image = (bytes: Buffer) => ({ type: 'image_url', image_url: { url: dataUrl(bytes) } });
				expectSentOnce(server, { model: 'm', messages: [user(image(png(size)), image(png(16)))] });
			} finally {
				await result.cleanup();
			}
		});
	});
});
