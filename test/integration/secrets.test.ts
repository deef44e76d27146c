/**
 * The API key never surfaces: a sentinel key drives a representative workflow per node and per error path, and every
 * output item, error (message, description, context), n8n log line, binary metadata and the services' own logs are
 * scanned for it. A hostile "echo" service that repeats the key in every answer covers the paths where the service's
 * own words reach the user.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import type { FaultRule } from '../mock/types';
import { generateParams, PATHS } from '../support/faultTable';

/** The random part every key of this file carries: found anywhere = a leak, whichever key it came from. */
const MARK = randomBytes(12).toString('hex');
const KEY = `sk-live-${MARK}`;
/** Known to the second mock, without video permission. */
const NO_VIDEO_KEY = `sk-novideo-${MARK}`;
/** The key in the shapes it could leak in: plain, in a Bearer header, base64 (basic-auth style), URL-encoded. */
const NEEDLES = [MARK, Buffer.from(KEY).toString('base64').slice(4, 30), Buffer.from(`Bearer ${KEY}`).toString('base64').slice(8, 36)];

let mock: MockClient;
/** Knows neither key as its main key: KEY is a wrong key there, NO_VIDEO_KEY a key without video permission. */
let strictMock: MockClient;
let echo: { url: string; close(): Promise<void> };
beforeAll(async () => {
	[mock, strictMock, echo] = await Promise.all([
		spawnMockProcess({ apiKey: KEY }),
		spawnMockProcess({ apiKey: 'someone-elses-key-0000', secondaryKeys: { [NO_VIDEO_KEY]: { video: false } } }),
		startEchoService(),
	]);
});
afterAll(async () => await Promise.all([mock?.stop(), strictMock?.stop(), echo?.close()]));
beforeEach(async () => await Promise.all([mock.reset(), strictMock.reset()]));

/**
 * A service that repeats the presented key in every answer: a JSON error, an unreadable 2xx submission answer, an HTML
 * status page, a text "video", an error event in a stream, an image error.
 */
async function startEchoService(): Promise<{ url: string; close(): Promise<void> }> {
	const server = createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString()));
		req.on('end', () => {
			const header = req.headers.authorization ?? '';
			const said = `key ${header.replace(/^Bearer\s+/i, '')} (header "${header}")`;
			const path = (req.url ?? '').split('?')[0];
			const send = (status: number, type: string, text: string) =>
				res.writeHead(status, { 'Content-Type': type }).end(text);
			const json = (status: number, payload: unknown) => send(status, 'application/json', JSON.stringify(payload));
			if (path === '/v1/models') return json(400, { error: { message: `rejected ${said}` } });
			if (path === '/v1/tasks/vendor') return send(200, 'text/plain', `accepted for ${said}`);
			if (/^\/v1\/tasks\/[^/]+$/.test(path)) return send(200, 'text/html', `<html><body>status for ${said}</body></html>`);
			if (path.endsWith('/artifacts')) return json(200, { data: [{ key: 'video', mime_type: 'video/mp4' }] });
			if (path.endsWith('/content')) return send(200, 'text/plain', `no video for ${said}`);
			if (path === '/v1/chat/completions' && /"stream":\s*true/.test(body)) {
				return send(200, 'text/event-stream', `data: ${JSON.stringify({ error: { message: `stream refused ${said}` } })}\n\n`);
			}
			return json(401, { error: { message: `unauthorised ${said}` } });
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		close: () => new Promise<void>((resolve) => {
			server.close(() => resolve());
			server.closeAllConnections();
		}),
	};
}

/** Where a needle was found, as readable places ("logs[12]", "error Video", ...). */
async function leaks(result: RunResult, nodeName: string): Promise<string[]> {
	const places: Array<[string, unknown]> = [
		['run', result.run],
		...result.logs.map((line, index): [string, unknown] => [`logs[${index}]`, line]),
	];
	const error = result.nodeError(nodeName);
	if (error) places.push([`error ${nodeName}`, { ...error, message: error.message, stack: error.stack }]);
	// Binary metadata as the binary data service stores it (file name, MIME type, size).
	const binaryData = Container.get(BinaryDataService);
	for (const item of result.output(nodeName)) {
		for (const [property, binary] of Object.entries(item.binary ?? {})) {
			places.push([`binary ${property}`, binary]);
			if (binary.id) places.push([`binary ${property} metadata`, await binaryData.getMetadata(binary.id)]);
		}
	}
	for (const client of [mock, strictMock]) places.push([`service log ${client.url}`, await client.log()]);
	return places
		.filter(([, thing]) => {
			const text = typeof thing === 'string' ? thing : JSON.stringify(thing);
			return NEEDLES.some((needle) => text.includes(needle));
		})
		.map(([where]) => where);
}

interface Case {
	name: string;
	node: HarnessNode;
	baseUrl?: string;
	apiKey?: string;
	input?: Array<Record<string, unknown>>;
	faults?: FaultRule[];
	/** What the run must show, so the scan is not of an empty run. */
	expect: (result: RunResult) => void;
}

const node = (type: string, parameters: Record<string, unknown>, extra: Partial<HarnessNode> = {}): HarnessNode => ({
	name: 'Node',
	type,
	parameters,
	credentials: true,
	...extra,
});
const models = (extra: Partial<HarnessNode> = {}) => node('genGatewayModels', { operation: 'getMany', returnAll: true }, extra);
const chat = (streaming: 'always' | 'never', extra: Partial<HarnessNode> = {}) =>
	node('genGatewayChat', {
		operation: 'message',
		model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' },
		messages: { values: [{ role: 'user', content: 'alpha beta gamma delta' }] },
		options: { streaming },
	}, extra);
const response = () =>
	node('genGatewayChat', {
		operation: 'response',
		model: { __rl: true, mode: 'id', value: 'gk-chat-1' },
		input: { values: [{ role: 'user', content: 'hello there' }] },
	});
const image = (extra: Record<string, unknown> = {}, settings: Partial<HarnessNode> = {}) =>
	node('genGatewayImage', { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'a fox', size: '256x256', ...extra }, settings);
const video = (parameters: Record<string, unknown>, extra: Partial<HarnessNode> = {}) => node('genGatewayVideo', parameters, extra);

const succeeded = (result: RunResult) => {
	expect(result.error).toBeUndefined();
	expect(result.output('Node').length).toBeGreaterThan(0);
	expect(result.output('Node').every((item) => item.json.error === undefined)).toBe(true);
};
const failed = (pattern: RegExp) => (result: RunResult) => expect(result.nodeError('Node')?.message).toMatch(pattern);
const errorItem = (pattern: RegExp) => (result: RunResult) => expect(String(result.output('Node')[0]?.json.error)).toMatch(pattern);
const withBinary = (result: RunResult) => {
	succeeded(result);
	expect(Object.keys(result.output('Node')[0].binary ?? {})).not.toEqual([]);
};

const CASES: Case[] = [
	// Models
	{ name: 'Models: list', node: models(), expect: succeeded },
	{ name: 'Models: wrong key (403)', node: models(), baseUrl: 'strict', expect: failed(/failed with 403/) },
	{ name: 'Models: key echoed in a 400', node: models(), baseUrl: 'echo', expect: failed(/failed with 400: rejected key \*\*\*/) },
	{ name: 'Models: unreadable 200', node: models(), faults: [{ path: PATHS.models, kind: 'malformed-json' }], expect: failed(/Unreadable answer/) },
	{ name: 'Models: connection cut, retried', node: models(), faults: [{ path: PATHS.models, kind: 'cut-before' }], expect: succeeded },
	{ name: 'Models: 503 with a too long Retry-After', node: models({ continueOnFail: true }), faults: [{ path: PATHS.models, kind: 'status', status: 503, retryAfter: 60 }], expect: errorItem(/503/) },
	// Chat
	{ name: 'Chat: message', node: chat('never'), expect: succeeded },
	{ name: 'Chat: streamed message', node: chat('always'), expect: succeeded },
	{ name: 'Chat: response', node: response(), expect: succeeded },
	{ name: 'Chat: stream cut (partial kept)', node: chat('always', { continueOnFail: true }), faults: [{ path: '^/v1/chat/completions$', kind: 'sse-cut' }], expect: errorItem(/incomplete/) },
	{ name: 'Chat: lost answer', node: chat('never'), faults: [{ path: '^/v1/chat/completions$', kind: 'cut-after-accept' }], expect: failed(/unknown/) },
	{ name: 'Chat: key echoed in a 401', node: chat('never'), baseUrl: 'echo', expect: failed(/failed with 401/) },
	{ name: 'Chat: key echoed in a stream error event', node: chat('always'), baseUrl: 'echo', expect: failed(/failed while streaming/) },
	{ name: 'Chat: wrong key', node: chat('never', { continueOnFail: true }), baseUrl: 'strict', expect: errorItem(/403/) },
	// Image
	{ name: 'Image: generate (URL download into binary)', node: image(), expect: withBinary },
	{ name: 'Image: generate (base64 into binary)', node: image({ options: { responseFormat: 'b64_json' } }), expect: withBinary },
	{ name: 'Image: rejected size (400)', node: image({ size: '1792x1024' }), expect: failed(/failed with 400/) },
	{ name: 'Image: key echoed in a 401', node: image({}, { continueOnFail: true }), baseUrl: 'echo', expect: errorItem(/401/) },
	// Video
	{ name: 'Video: generate and download', node: video(generateParams('[[instant]] secret scan')), expect: withBinary },
	{ name: 'Video: FAILURE', node: video(generateParams('[[instant]] [[fail=blocked]]'), { continueOnFail: true }), expect: errorItem(/failed: blocked/) },
	{ name: 'Video: lost answer, Retry On Fail', node: video(generateParams('[[instant]] lost'), { retryOnFail: true, maxTries: 2, waitBetweenTries: 1 }), faults: [{ path: PATHS.submit, kind: 'cut-after-accept' }], expect: failed(/unknown outcome/) },
	{ name: 'Video: invalid parameters (nothing sent)', node: video(generateParams('x', { duration: 99 })), expect: failed(/Invalid video request/) },
	{ name: 'Video: expired URL', node: video(generateParams('[[instant]] [[ttlMs=1]]')), expect: failed(/410/) },
	{ name: 'Video: unreadable status', node: video(generateParams('[[instant]] x')), faults: [{ path: PATHS.poll, kind: 'malformed-json' }], expect: failed(/Could not check the status/) },
	{ name: 'Video: wrong key', node: video(generateParams('[[instant]] x')), baseUrl: 'strict', expect: failed(/403/) },
	{ name: 'Video: key without video permission', node: video(generateParams('[[instant]] x')), baseUrl: 'strict', apiKey: NO_VIDEO_KEY, expect: failed(/no permission for video/) },
	{ name: 'Video: key echoed in an unreadable submission answer', node: video(generateParams('x')), baseUrl: 'echo', expect: failed(/outcome of POST \/v1\/tasks\/vendor is unknown/) },
	{ name: 'Video: key echoed in a status page', node: video({ operation: 'getStatus', taskId: 'task_0' }), baseUrl: 'echo', expect: failed(/HTML page/) },
	{ name: 'Video: key echoed instead of the file', node: video({ operation: 'download', taskId: 'task_0' }), baseUrl: 'echo', expect: failed(/Not the file/) },
	{ name: 'Video: Get Status, by task id', node: video({ operation: 'getStatus', taskId: '={{ $json.id }}' }, { continueOnFail: true }), input: [{ id: 'task_missing' }], expect: errorItem(/404/) },
];

describe('the API key never surfaces', () => {
	it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
		if (c.faults) await mock.setFaults(c.faults);
		const baseUrl = c.baseUrl === 'strict' ? strictMock.url : c.baseUrl === 'echo' ? echo.url : mock.url;
		const result = await runWorkflow({
			nodes: [c.node],
			input: c.input,
			binaryMode: 'filesystem',
			credentials: { baseUrl, apiKey: c.apiKey ?? KEY },
		});
		try {
			c.expect(result);
			expect(await leaks(result, 'Node')).toEqual([]);
		} finally {
			await result.cleanup();
		}
	});

	it('the scan finds the key where it is (a check of the check)', async () => {
		const result = await runWorkflow({
			nodes: [node('harness.noOp', {}, { credentials: false })],
			input: [{ leaked: `Authorization: Bearer ${KEY}` }],
		});
		expect(await leaks(result, 'Node')).toEqual(expect.arrayContaining(['run']));
	});
});
