/**
 * The Timeout option of Chat and Image, through n8n's engine against servers of the test's own: a non-streamed answer
 * that takes longer, and a stream that goes silent, fail with an error naming the Timeout and how to raise it; a
 * stream that keeps sending (even only keep-alive comments) is not cut. Defaults: 600 s, like the OpenAI SDK.
 */
import { createServer } from 'http';
import type { IncomingMessage, Server, ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import {
	DEFAULT_TIMEOUT_SECONDS,
	MAX_DOWNLOAD_TIME,
	timeoutMsOf,
	totalBoundMsOf,
} from '../../nodes/shared/descriptions/timeoutOption';
import { runWorkflow } from '../harness/engine';
import { pngFile } from '../support/hostileServers';
import type { RunResult } from '../harness/engine';

const API_KEY = 'sentinel-key-timeouts-3c9d';

jest.setTimeout(40_000);

/** Timers of the servers below, cleared when a test ends (a late answer must not keep jest waiting). */
const timers = new Set<ReturnType<typeof setTimeout>>();
const later = (ms: number, fn: () => void) => {
	const timer = setTimeout(() => {
		timers.delete(timer);
		fn();
	}, ms);
	timers.add(timer);
};
afterEach(() => {
	for (const timer of timers) clearTimeout(timer);
	timers.clear();
});

type Handler = (req: IncomingMessage, res: ServerResponse, body: IDataObject) => void;

interface Served {
	url: string;
	posts: () => number;
	closedByClient: () => boolean;
}

async function withServer(handler: Handler, test: (s: Served) => Promise<void>): Promise<void> {
	let posts = 0;
	let closedByClient = false;
	const server: Server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			if (req.method === 'POST') posts++;
			res.on('close', () => {
				if (!res.writableEnded) closedByClient = true;
			});
			handler(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as IDataObject);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		const { port } = server.address() as AddressInfo;
		await test({ url: `http://127.0.0.1:${port}`, posts: () => posts, closedByClient: () => closedByClient });
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}


const json = (res: ServerResponse, body: unknown) => {
	if (res.destroyed) return;
	res.writeHead(200, { 'Content-Type': 'application/json' });
	res.end(JSON.stringify(body));
};

const completion = { id: 'c1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }] };
const chunk = (content: string) => `data: ${JSON.stringify({ model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const chat = (options: IDataObject) => ({
	operation: 'message',
	model: model('m'),
	messages: { values: [{ role: 'user', content: 'think hard' }] },
	options,
});
const responses = (options: IDataObject) => ({
	operation: 'response',
	model: model('m'),
	input: { values: [{ role: 'user', content: 'think hard' }] },
	options,
});
const image = (options: IDataObject) => ({ operation: 'generate', model: model('img-1'), prompt: 'a fox', size: '256x256', options });

async function run(type: string, parameters: IDataObject, baseUrl: string, continueOnFail = false): Promise<RunResult> {
	return await runWorkflow({
		nodes: [{ name: 'Node', type, parameters, credentials: true, continueOnFail }],
		credentials: { baseUrl, apiKey: API_KEY },
	});
}

type NodeError = Error & { description?: string; context?: IDataObject };

/** A paid request of each node, not streamed, with a Timeout of 1 s: its path, and a whole answer to it. */
const NOT_STREAMED: Array<[string, string, IDataObject, string, IDataObject]> = [
		['Chat: Message a Model', 'genGatewayChat', chat({ timeout: 1 }), '/v1/chat/completions', completion],
		['Chat: Create a Response', 'genGatewayChat', responses({ timeout: 1 }), '/v1/responses', { object: 'response', status: 'completed', output: [] }],
		['Image', 'genGatewayImage', image({ timeout: 1, responseFormat: 'url' }), '/v1/images/generations', { data: [{ url: 'http://127.0.0.1:9/x.png' }] }],
];

describe('a non-streamed answer slower than the Timeout', () => {
	it.each(NOT_STREAMED)('%s: an unknown outcome naming the Timeout and how to raise it, sent once', async (_name, type, parameters, path, answer) => {
		await withServer(
			// Far later than the Timeout of 1 s (the engine's own start-up may take a second on a busy machine).
			(_req, res) => later(8000, () => json(res, answer)),
			async (server) => {
				const started = Date.now();
				const result = await run(type, parameters, server.url);
				const error = result.nodeError('Node') as NodeError;
				expect(error?.message).toBe(
					`The outcome of POST ${path} is unknown: no answer within 1 s (its timeout ran out). The service may have accepted it (and may charge for it), so it was not resubmitted.`,
				);
				expect(error.description).toContain('raise the node\'s "Timeout" option (Options → Timeout, in seconds)');
				expect(error.context?.outcomeUnknown).toBe(true);
				expect(Date.now() - started).toBeLessThan(6000);
				expect(server.posts()).toBe(1);
			},
		);
	});
});

describe('a stream silent for longer than the Timeout', () => {
	it.each([
		['Message a Model', chat({ timeout: 1, streaming: 'always' }), '/v1/chat/completions', chunk('Hel')],
		[
			'Create a Response',
			responses({ timeout: 1, streaming: 'always' }),
			'/v1/responses',
			`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'Hel' })}\n\n`,
		],
	])('%s: hangs up after the Timeout of silence, keeping the partial text', async (_name, parameters, path, first) => {
		await withServer(
			(_req, res) => {
				res.writeHead(200, { 'Content-Type': 'text/event-stream' });
				res.write(first);
				// Before the fix: waited 120 s for the socket time-out (here the server gives up after 8 s).
				later(8000, () => res.destroy());
			},
			async (server) => {
				const started = Date.now();
				const result = await run('genGatewayChat', parameters, server.url, true);
				const [item] = result.output();
				expect(item.json.error).toBe(
					`The stream of POST ${path} broke before it was complete (nothing arrived for 1 s: the node's Timeout ran out): the output is incomplete, 3 characters arrived. The upstream generation may not have been cancelled (it may still run and be charged), so the request was not resent.`,
				);
				expect(item.json.partialContent).toBe('Hel');
				expect(item.json.errorDescription).toContain('Options → Timeout');
				expect(Date.now() - started).toBeLessThan(6000);
				expect(server.closedByClient()).toBe(true);
				expect(server.posts()).toBe(1);
			},
		);
	});

	it('a stream that keeps sending (keep-alive comments) runs past the Timeout: it is an idle limit, not a total one', async () => {
		await withServer(
			(_req, res) => {
				res.writeHead(200, { 'Content-Type': 'text/event-stream' });
				res.write(chunk('Hel'));
				const ping = setInterval(() => res.write(': keep-alive\n\n'), 300);
				later(2200, () => {
					clearInterval(ping);
					res.write(chunk('lo'));
					res.write('data: [DONE]\n\n');
					res.end();
				});
			},
			async (server) => {
				const result = await run('genGatewayChat', chat({ timeout: 1, streaming: 'always' }), server.url);
				expect(result.output()[0].json).toMatchObject({ content: 'Hello' });
			},
		);
	});
});

/**
 * Writes `head`, then `filler` every 300 ms until `forMs` passed, then `tail` and the end: the socket is never idle for
 * the Timeout, so only a bound on the whole ends the wait. `forMs` is many times the bound under test: before the fix
 * the run went on until the tail (a whole answer, or a whole stream), so a test fails then instead of hanging.
 */
/** Whether the client hung up, waiting for the server to see it (a few seconds, far less than the trickle lasts). */
async function closedSoon(server: Served): Promise<boolean> {
	for (let i = 0; i < 50 && !server.closedByClient(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
	return server.closedByClient();
}

function trickle(res: ServerResponse, head: string, filler: string, forMs: number, tail: string) {
	res.write(head);
	const drip = setInterval(() => {
		if (!res.destroyed) res.write(filler);
	}, 300);
	later(forMs, () => {
		clearInterval(drip);
		if (!res.destroyed) res.end(tail);
	});
	res.on('close', () => clearInterval(drip));
}

describe('an answer that trickles: a Timeout ends it (issue 51, 6)', () => {
	it.each(NOT_STREAMED)('%s, not streamed: `{` then a space every 300 ms ends with the Timeout\'s error, sent once', async (_name, type, parameters, path, answer) => {
		await withServer(
			(_req, res) => {
				res.writeHead(200, { 'Content-Type': 'application/json' });
				// 15 × the Timeout: the whole answer, had the run waited for it.
				trickle(res, '{', ' ', 15_000, JSON.stringify(answer).slice(1));
			},
			async (server) => {
				const result = await run(type, parameters, server.url);
				const error = result.nodeError('Node') as NodeError;
				expect(error?.message).toBe(
					`The outcome of POST ${path} is unknown: no answer within 1 s (its timeout ran out). The service may have accepted it (and may charge for it), so it was not resubmitted.`,
				);
				expect(error.description).toContain('raise the node\'s "Timeout" option (Options → Timeout, in seconds)');
				expect(error.context?.outcomeUnknown).toBe(true);
				// Hung up on before the answer was whole: the bound ended it, not the server.
				expect(await closedSoon(server)).toBe(true);
				expect(server.posts()).toBe(1);
			},
		);
	});

	it.each([
		['Message a Model', chat({ timeout: 1, streaming: 'always', maxAnswerTime: 0.04 }), '/v1/chat/completions', chunk('Hel'), 'data: [DONE]\n\n'],
		[
			'Create a Response',
			responses({ timeout: 1, streaming: 'always', maxAnswerTime: 0.04 }),
			'/v1/responses',
			`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'Hel' })}\n\n`,
			`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { object: 'response', status: 'completed', output: [] } })}\n\n`,
		],
	])('%s, streamed: `: PING` every 300 ms ends at Max Answer Time, keeping the partial text', async (_name, parameters, path, first, last) => {
		await withServer(
			(_req, res) => {
				res.writeHead(200, { 'Content-Type': 'text/event-stream' });
				// Pings for 8 × Max Answer Time (2.4 s), then the end of a whole stream.
				trickle(res, first, ': PING\n\n', 20_000, last);
			},
			async (server) => {
				const result = await run('genGatewayChat', parameters, server.url, true);
				const [item] = result.output();
				expect(item.json.error).toBe(
					`The stream of POST ${path} broke before it was complete (the node's Max Answer Time ran out: the answer was not complete after 0.04 min in all): the output is incomplete, 3 characters arrived. The upstream generation may not have been cancelled (it may still run and be charged), so the request was not resent.`,
				);
				expect(item.json.partialContent).toBe('Hel');
				expect(item.json.errorDescription).toContain('raise the node\'s "Max Answer Time (Minutes)" option');
				expect(await closedSoon(server)).toBe(true);
				expect(server.posts()).toBe(1);
			},
		);
	});
});

describe('a download that trickles: Max Download Time ends it (issue 51, 6)', () => {
	it('Image: 64 KiB, then a byte every 300 ms: the bound named, the URL kept, nothing stored, one download', async () => {
		const png = pngFile(256 * 1024, 7);
		let downloads = 0;
		await withServer(
			(req, res) => {
				if (req.method === 'POST') return json(res, { created: 1, data: [{ url: `http://${req.headers.host}/files/a.png` }] });
				downloads++;
				res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': png.length });
				// A byte every 300 ms for 8 × Max Download Time (2.4 s), then the rest: before the fix, a whole file.
				let sent = 64 * 1024;
				res.write(png.subarray(0, sent));
				const drip = setInterval(() => {
					if (!res.destroyed) res.write(png.subarray(sent, ++sent));
				}, 300);
				later(20_000, () => {
					clearInterval(drip);
					if (!res.destroyed) res.end(png.subarray(sent));
				});
				res.on('close', () => clearInterval(drip));
			},
			async (server) => {
				const result = await run(
					'genGatewayImage',
					image({ timeout: 1, responseFormat: 'url', maxDownloadTime: 0.04 }),
					server.url,
				);
				const error = result.nodeError('Node') as NodeError;
				expect(error?.message).toMatch(
					/^Downloading image-1 failed: it was not complete after 0\.04 min in all \(the node's Max Download Time ran out\); \d+ bytes had arrived$/,
				);
				expect(error.description).toContain('raise the node\'s "Max Download Time (Minutes)" option');
				expect(error.context?.imageUrls).toEqual([`${server.url}/files/a.png`]);
				expect(await closedSoon(server)).toBe(true);
				expect(downloads).toBe(1);
				expect(server.posts()).toBe(1);
			},
		);
	});
});

describe('odd values of the options (found by an attack on issue 51, 6)', () => {
	it.each([3e6, 1e9])(
		'Timeout %d s (past Node\'s longest timer): a paid request is sent and answered, not failed at once as an unknown outcome',
		async (timeout) => {
			await withServer(
				(_req, res) => json(res, completion),
				async (server) => {
					const result = await run('genGatewayChat', chat({ timeout, streaming: 'never' }), server.url);
					expect(result.nodeError('Node')).toBeUndefined();
					expect(server.posts()).toBe(1);
				},
			);
		},
	);

	it('a total bound of 0 or less (from an expression) is the option\'s minimum, never the default', () => {
		expect(totalBoundMsOf(MAX_DOWNLOAD_TIME, 0)).toBe(3_000);
		expect(totalBoundMsOf(MAX_DOWNLOAD_TIME, -5)).toBe(3_000);
		expect(totalBoundMsOf(MAX_DOWNLOAD_TIME, 0.5)).toBe(30_000);
		expect(totalBoundMsOf(MAX_DOWNLOAD_TIME, undefined)).toBe(600_000);
		expect(totalBoundMsOf(MAX_DOWNLOAD_TIME, 'ten')).toBe(600_000);
	});
});

describe('the default Timeout suits long model answers', () => {
	it('is 600 s in both nodes (the OpenAI SDK waits as long), and applies when the option is not set', () => {
		expect(DEFAULT_TIMEOUT_SECONDS).toBe(600);
		expect(timeoutMsOf(undefined)).toBe(600_000);
		expect(timeoutMsOf(30)).toBe(30_000);
		for (const node of [new GenGatewayChat(), new GenGatewayImage()]) {
			const options = node.description.properties.filter((p) => p.name === 'options');
			const timeout = options.flatMap((p) => (p.options ?? []) as Array<{ name: string; default?: unknown }>).find((o) => o.name === 'timeout');
			expect(timeout?.default).toBe(600);
		}
	});
});
