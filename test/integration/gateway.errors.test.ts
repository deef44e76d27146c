// Time: about 40 s alone, 75 s under load (429s really waited: Retry-After 1 s, backoff, 2.5 s rate-limit budgets).
/**
 * Issue 27, point 2: every error shape a real gateway (new-api, ../shared/GATEWAY-REAL.md) sends, over loopback,
 * through n8n's engine, to each node: the user's message and description (the service's words, its code in the
 * details, the hint, never the key) and the number of paid requests. A refusal costs one POST; a bare 429 (empty
 * body, no Content-Type, no Retry-After: the relay's limiter) created nothing and is retried with backoff until a 200.
 */
import type { ServerResponse } from 'node:http';

import { DEFAULT_RETRY_POLICY } from '../../nodes/shared/transport/retry';
import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import { describeError, generateParams } from '../support/faultTable';
import { startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';
import { findSecret } from '../support/videoRun';

jest.setTimeout(60_000);

const KEY = 'sk-newapi-errors-4b7c9d2e1f0a';
const TASK_ID = 'task_0123456789abcdef0123456789abcdef';
/** A well-formed (tiny) mp4: an ftyp box, an empty moov box, then an mdat box holding the payload. */
const VIDEO = (() => {
	const payload = Buffer.from('new-api video bytes');
	const mdat = Buffer.alloc(8);
	mdat.writeUInt32BE(8 + payload.length, 0);
	mdat.write('mdat', 4, 'latin1');
	const moov = Buffer.from('\x00\x00\x00\x08moov', 'latin1');
	return Buffer.concat([Buffer.from('\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isommp42', 'latin1'), moov, mdat, payload]);
})();
const PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
	'base64',
);
const CHINESE_429 = '当前分组上游负载已饱和，请稍后再试';
const HINT = {
	key: "Check the API key's permissions: is it the right key for this base URL, and may it use this endpoint?",
	invalid: 'The service rejected the request as invalid: correct the parameters named above.',
	rate: /^Rate limit exceeded, still after retrying with backoff/,
};

/** One answer, byte for byte: a JSON body (with its Content-Type), raw text with the given headers, or nothing. */
interface Reply {
	status: number;
	json?: unknown;
	text?: string | Buffer;
	headers?: Record<string, string>;
}

const send = (res: ServerResponse, reply: Reply) => {
	const body = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? '');
	const type: Record<string, string> =
		reply.json !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {};
	res.writeHead(reply.status, { ...type, 'content-length': String(Buffer.byteLength(body)), ...reply.headers });
	res.end(body);
};

/** new-api's shapes (GATEWAY-REAL.md). */
const wrapped = (status: number, message: string, type = 'invalid_request_error'): Reply => ({
	status,
	json: { error: { message, type } },
});
const flat = (status: number, code: string, message: string, headers?: Record<string, string>): Reply => ({
	status,
	json: { code, message, data: null },
	headers,
});
const authError = (status: 401 | 403, message: string): Reply => ({
	status,
	json: { error: { message, type: 'new_api_error', code: '' } },
	headers: { 'x-oneapi-request-id': '20261126120000123456789' },
});
/** The relay's in-memory limiter: empty body, no Content-Type, no Retry-After. */
const BARE_429: Reply = { status: 429 };

interface Gateway extends ScriptedServer {
	/** Paid POSTs that reached the server (refused or not). */
	posts(): number;
	/** Paid POSTs answered with a result: what was created and billed. */
	created(): number;
	/** Requests as "STATUS METHOD path" lines. */
	lines(): string[];
}

/**
 * A loopback gateway answering as new-api does. `script` gives the first answers of a route ("POST /v1/tasks/vendor",
 * "GET /v1/models", ...) in order; once they are used up, the route answers its success.
 */
async function startGateway(script: Record<string, Reply[]> = {}): Promise<Gateway> {
	const queues = new Map(Object.entries(script).map(([route, replies]) => [route, [...replies]]));
	const lines: string[] = [];
	let created = 0;
	const server = await startScriptedServer((req, res) => {
		const path = req.path.split('?')[0];
		const route = `${req.method} ${path}`;
		const scripted = queues.get(route)?.shift();
		const reply = scripted ?? success(req, path, server.url);
		if (reply === 'stream') {
			created++;
			lines.push(`200 ${route}`);
			return streamChat(res);
		}
		if (!scripted && req.method === 'POST' && reply.status === 200) created++;
		lines.push(`${reply.status} ${route}`);
		send(res, reply);
	});
	return Object.assign(server, {
		posts: () => server.requests.filter((r) => r.method === 'POST').length,
		created: () => created,
		lines: () => [...lines],
	});
}

function success(req: ScriptedRequest, path: string, url: string): Reply | 'stream' {
	const now = 1764158400;
	if (req.method === 'POST' && path === '/v1/tasks/vendor') {
		return {
			status: 200,
			json: { id: TASK_ID, task_id: TASK_ID, status: 'queued', model: 'sd_2.0_fast_discount', created_at: now },
		};
	}
	if (req.method === 'GET' && path === `/v1/tasks/${TASK_ID}`) {
		const record = { task_id: TASK_ID, platform: 'vendor', status: 'SUCCESS', progress: '100%', fail_reason: '' };
		return { status: 200, json: { ...record, created_at: now, finished_at: now + 40 } };
	}
	if (req.method === 'GET' && path === `/v1/tasks/${TASK_ID}/artifacts`) {
		const content_url = `${url}/v1/tasks/${TASK_ID}/artifacts/video/content?access=signed-capability`;
		return {
			status: 200,
			json: { task_id: TASK_ID, artifacts: [{ key: 'video', type: 'video', mime_type: 'video/mp4', content_url }] },
		};
	}
	if (req.method === 'GET' && path === `/v1/tasks/${TASK_ID}/artifacts/video/content`) {
		return { status: 200, text: VIDEO, headers: { 'content-type': 'video/mp4' } };
	}
	if (/^\/v1\/tasks\/[^/]+$/.test(path)) {
		return { ...wrapped(404, 'Task not found'), headers: { 'cache-control': 'private, no-store' } };
	}
	if (req.method === 'POST' && path === '/v1/chat/completions') {
		if (/"stream":\s*true/.test(req.body)) return 'stream';
		const choice = { index: 0, message: { role: 'assistant', content: 'Hello from new-api' }, finish_reason: 'stop' };
		return {
			status: 200,
			json: { id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [choice] },
		};
	}
	if (req.method === 'POST' && path === '/v1/images/generations') {
		return { status: 200, json: { created: now, data: [{ b64_json: PNG.toString('base64') }] } };
	}
	if (req.method === 'GET' && path === '/v1/models') {
		const model = (id: string, types: string[]) => ({
			id,
			object: 'model',
			created: now,
			owned_by: 'custom',
			supported_endpoint_types: types,
		});
		return {
			status: 200,
			json: {
				success: true,
				data: [model('gpt-4o-mini', ['openai']), model('img-1', ['image-generation'])],
				object: 'list',
			},
		};
	}
	return wrapped(404, `Invalid URL (${req.method} ${path})`);
}

/** new-api's SSE: keep-alive comments, deltas, the usage chunk with no choices, then [DONE]. */
function streamChat(res: ServerResponse): void {
	const chunk = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
	const delta = (content: string) =>
		chunk({
			id: 'c1',
			object: 'chat.completion.chunk',
			model: 'gpt-4o-mini',
			choices: [{ index: 0, delta: { content }, finish_reason: null }],
		});
	res.writeHead(200, { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' });
	res.end(
		`: PING\n\n${delta('Hello ')}${delta('from new-api')}` +
			chunk({
				id: 'c1',
				object: 'chat.completion.chunk',
				model: 'gpt-4o-mini',
				choices: [],
				usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
			}) +
			'data: [DONE]\n\n',
	);
}

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const NODES = {
	video: (): HarnessNode => ({
		name: 'Node',
		type: 'genGatewayVideo',
		parameters: generateParams('a fox at dawn'),
		credentials: true,
	}),
	status: (): HarnessNode => ({
		name: 'Node',
		type: 'genGatewayVideo',
		parameters: { operation: 'getStatus', taskId: 'task_unknown00000000000000000000000' },
		credentials: true,
	}),
	chat: (streaming: 'always' | 'never'): HarnessNode => ({
		name: 'Node',
		type: 'genGatewayChat',
		parameters: {
			operation: 'message',
			model: model('gpt-4o-mini'),
			messages: { values: [{ role: 'user', content: 'hello' }] },
			options: { streaming },
		},
		credentials: true,
	}),
	image: (): HarnessNode => ({
		name: 'Node',
		type: 'genGatewayImage',
		parameters: { operation: 'generate', model: model('img-1'), prompt: 'a fox', size: '256x256' },
		credentials: true,
	}),
	models: (): HarnessNode => ({
		name: 'Node',
		type: 'genGatewayModels',
		parameters: { operation: 'getMany', returnAll: true },
		credentials: true,
	}),
};

let credentialCount = 0;
const results: RunResult[] = [];
const servers: Gateway[] = [];
afterEach(async () => {
	while (results.length) await results.pop()!.cleanup();
	while (servers.length) await servers.pop()!.close();
});

async function gateway(script: Record<string, Reply[]> = {}): Promise<Gateway> {
	const server = await startGateway(script);
	servers.push(server);
	return server;
}

/**
 * Runs one node against the gateway. A credential of its own each time: a 429 teaches the credential's pace
 * (pacer.ts), which would slow the next runs on it.
 */
async function run(server: Gateway, node: HarnessNode, apiKey = KEY): Promise<RunResult> {
	credentialCount++;
	const credentials = { id: `gatewayErrors${credentialCount}`, name: `Gateway errors ${credentialCount}` };
	const result = await runWorkflow({
		nodes: [{ ...node, credentials }],
		credentials: { baseUrl: server.url, apiKey },
		binaryMode: 'filesystem',
	});
	results.push(result);
	return result;
}

/** The node's error as the user sees it, after checking that no form of the key is anywhere in the run or logs. */
function userError(result: RunResult, key = KEY): { message: string; description: string } {
	for (const form of [key, key.toUpperCase(), key.toLowerCase()])
		expect(findSecret(form, result.run, result.logs)).toEqual([]);
	const error = result.nodeError('Node');
	expect(error).toBeDefined();
	return describeError(error);
}

/** Runs `body` with 429s waited out for `ms` at most (30 min by default), so a 429 that never ends ends the run. */
async function withShortRateLimitBudget<T>(ms: number, body: () => Promise<T>): Promise<T> {
	const saved = DEFAULT_RETRY_POLICY.maxRateLimitedMs;
	DEFAULT_RETRY_POLICY.maxRateLimitedMs = ms;
	try {
		return await body();
	} finally {
		DEFAULT_RETRY_POLICY.maxRateLimitedMs = saved;
	}
}

const SUBMIT = 'POST /v1/tasks/vendor';
const CHAT = 'POST /v1/chat/completions';
const IMAGES = 'POST /v1/images/generations';
const MODELS = 'GET /v1/models';

describe('Video Generate: the submission refused in new-api shapes (one POST, nothing created)', () => {
	it.each([
		[
			'flat 400 from the submission (upstream refusal)',
			flat(400, 'fail_to_fetch_task', 'upstream: the prompt was rejected by the provider'),
			'POST /v1/tasks/vendor failed with 400: upstream: the prompt was rejected by the provider',
			`${HINT.invalid} The service's error code "fail_to_fetch_task".`,
		],
		[
			'wrapped 400 (model not served by the plugin)',
			wrapped(400, 'model sd_2.0_fast_discount is not supported by plugin vendor'),
			'POST /v1/tasks/vendor failed with 400: model sd_2.0_fast_discount is not supported by plugin vendor',
			`${HINT.invalid} The service's error type "invalid_request_error".`,
		],
		[
			'401 wrapped (wrong key)',
			authError(401, 'Invalid token (request id: 20261126120000123456789)'),
			'POST /v1/tasks/vendor failed with 401: Invalid token (request id: 20261126120000123456789)',
			`${HINT.key} The service's error type "new_api_error".`,
		],
		[
			'403 wrapped (banned user)',
			authError(403, 'User has been banned (request id: 20261126120000123456789)'),
			'POST /v1/tasks/vendor failed with 403: User has been banned (request id: 20261126120000123456789)',
			`${HINT.key} The service's error type "new_api_error".`,
		],
		[
			'404 wrapped (unknown plugin)',
			wrapped(404, 'task plugin not found: vendor'),
			'POST /v1/tasks/vendor failed with 404: task plugin not found: vendor',
			`Not found: check the ID and the base URL of the credential. The service's error type "invalid_request_error".`,
		],
		[
			'415 wrapped (body not JSON)',
			wrapped(415, 'Content-Type must be application/json'),
			'POST /v1/tasks/vendor failed with 415: Content-Type must be application/json',
			'The service did not accept the format of the request (it expects a JSON body): check any proxy in between. ' +
				`The service's error type "invalid_request_error".`,
		],
		[
			'403 with an empty body (a firewall in front)',
			{ status: 403 },
			'POST /v1/tasks/vendor failed with 403: The service answered 403 Forbidden with an empty body (no message of its own).',
			HINT.key,
		],
		[
			'400 with a plain-text body',
			{ status: 400, text: 'Bad Request: malformed body', headers: { 'content-type': 'text/plain' } },
			'POST /v1/tasks/vendor failed with 400: The service answered with text that is not JSON: "Bad Request: malformed body"',
			HINT.invalid,
		],
	])('%s', async (_name, reply, message, description) => {
		const server = await gateway({ [SUBMIT]: [reply] });
		const error = userError(await run(server, NODES.video()));
		expect(error).toEqual({ message, description, name: 'NodeApiError' } as typeof error);
		expect(server.lines()).toEqual([`${reply.status} ${SUBMIT}`]);
		expect(server.created()).toBe(0);
	});

	it('a service echoing the key (as sent, upper-cased, as "Bearer <key>") in message and code: never shown', async () => {
		const said = `token ${KEY} (${KEY.toUpperCase()}) rejected; header was "Authorization: Bearer ${KEY}"`;
		const server = await gateway({
			[SUBMIT]: [{ status: 401, json: { error: { message: said, type: 'new_api_error', code: KEY.toUpperCase() } } }],
		});
		const error = userError(await run(server, NODES.video()));
		expect(error.message).toBe(
			'POST /v1/tasks/vendor failed with 401: token *** (***) rejected; header was "Authorization: Bearer ***"',
		);
		expect(error.description).toBe(`${HINT.key} The service's error code "***", type "new_api_error".`);
		expect(server.posts()).toBe(1);
	});

	it('flat 429 in Chinese with Retry-After: 1, twice, then accepted: the exact video, 3 POSTs, 1 task', async () => {
		const limited = flat(429, 'rate_limit_exceeded', CHINESE_429, { 'retry-after': '1' });
		const server = await gateway({ [SUBMIT]: [limited, limited] });
		const result = await run(server, NODES.video());
		expect(result.error).toBeUndefined();
		const [item] = result.output('Node');
		expect(item.json).toMatchObject({ task_id: TASK_ID, status: 'SUCCESS' });
		expect(await result.readBinary(item)).toEqual(VIDEO);
		expect(server.lines().filter((line) => line.endsWith(SUBMIT))).toEqual([
			`429 ${SUBMIT}`,
			`429 ${SUBMIT}`,
			`200 ${SUBMIT}`,
		]);
		expect(server.created()).toBe(1);
		// The service's Retry-After, not a shorter backoff: each retry waited the 1000 ms asked for.
		const retries = result.logs.filter((line) =>
			/POST \/v1\/tasks\/vendor answered 429; retry \d in \d+ ms/.test(line),
		);
		expect(retries.map((line) => line.replace(/.* in /, ''))).toEqual(['1000 ms', '1000 ms']);
	});

	it('flat 429 in Chinese without Retry-After, twice, then accepted: backoff, 3 POSTs, 1 task', async () => {
		const server = await gateway({
			[SUBMIT]: [flat(429, 'rate_limit_exceeded', CHINESE_429), flat(429, 'rate_limit_exceeded', CHINESE_429)],
		});
		const result = await run(server, NODES.video());
		expect(result.error).toBeUndefined();
		expect(await result.readBinary(result.output('Node')[0])).toEqual(VIDEO);
		expect(server.lines().filter((line) => line.endsWith(SUBMIT))).toEqual([
			`429 ${SUBMIT}`,
			`429 ${SUBMIT}`,
			`200 ${SUBMIT}`,
		]);
		expect(server.created()).toBe(1);
	});

	it('a bare 429 (no body, no Retry-After), three times, then accepted: 4 POSTs, 1 task, the exact video', async () => {
		const server = await gateway({ [SUBMIT]: [BARE_429, BARE_429, BARE_429] });
		const result = await run(server, NODES.video());
		expect(result.error).toBeUndefined();
		expect(await result.readBinary(result.output('Node')[0])).toEqual(VIDEO);
		expect(server.posts()).toBe(4);
		expect(server.created()).toBe(1);
		// Backoff doubling from 500 ms (jittered down to half): 250+, 500+, 1000+ ms.
		const waits = result.logs
			.filter((line) => /vendor answered 429; retry/.test(line))
			.map((line) => Number(/in (\d+) ms$/.exec(line)?.[1]));
		expect(waits).toHaveLength(3);
		waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(250 * 2 ** i));
	});

	it("flat 429 in Chinese outlasting the wait: the service's words, its code, the rate hint; nothing created", async () => {
		const server = await gateway({
			[SUBMIT]: Array.from({ length: 50 }, () => flat(429, 'rate_limit_exceeded', CHINESE_429)),
		});
		const result = await withShortRateLimitBudget(2500, async () => await run(server, NODES.video()));
		const error = userError(result);
		expect(error.message).toBe(`POST /v1/tasks/vendor failed with 429: ${CHINESE_429}`);
		expect(error.description).toMatch(HINT.rate);
		expect(error.description).toMatch(/ The service's error code "rate_limit_exceeded"\. Tried \d+ times\.$/);
		const tried = Number(/Tried (\d+) times/.exec(error.description)![1]);
		expect(server.posts()).toBe(tried);
		expect(tried).toBeGreaterThanOrEqual(3);
		expect(server.created()).toBe(0);
	});
});

describe('Video Get Status: an unknown task', () => {
	it('404 {"error":{"message":"Task not found"}}: the service\'s words, the not-found hint, asked once', async () => {
		const server = await gateway();
		const error = userError(await run(server, NODES.status()));
		expect(error.message).toBe('GET /v1/tasks/task_unknown00000000000000000000000 failed with 404: Task not found');
		expect(error.description).toBe(
			`Not found: check the ID and the base URL of the credential. The service's error type "invalid_request_error".`,
		);
		expect(server.lines()).toEqual([`404 GET /v1/tasks/task_unknown00000000000000000000000`]);
		expect(server.posts()).toBe(0);
	});
});

describe.each([
	['Chat, not streamed', 'chat', CHAT, () => NODES.chat('never')],
	['Chat, streamed', 'chat', CHAT, () => NODES.chat('always')],
	['Image', 'image', IMAGES, () => NODES.image()],
] as const)("%s: the relay's answers", (_name, kind, route, node) => {
	const path = route.slice('POST '.length);

	async function expectExactResult(result: RunResult): Promise<void> {
		expect(result.error).toBeUndefined();
		const [item] = result.output('Node');
		if (kind === 'image') expect(await result.readBinary(item)).toEqual(PNG);
		else expect(item.json).toMatchObject({ content: 'Hello from new-api' });
	}

	it('a bare 429 (no body, no Content-Type, no Retry-After) twice, then 200: the exact result, 3 POSTs', async () => {
		const server = await gateway({ [route]: [BARE_429, BARE_429] });
		const result = await run(server, node());
		await expectExactResult(result);
		expect(server.lines().filter((line) => line.endsWith(route))).toEqual([
			`429 ${route}`,
			`429 ${route}`,
			`200 ${route}`,
		]);
		expect(server.created()).toBe(1);
		// Backoff, as the node's log says: a wait before each retry, at least half the first 500 ms step.
		const waits = result.logs
			.filter((line) => line.includes(`${path} answered 429; retry`))
			.map((line) => Number(/in (\d+) ms$/.exec(line)?.[1]));
		expect(waits).toHaveLength(2);
		for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(250);
	});

	it('a bare 429 that outlasts the wait: says the body was empty, with the status, and the rate hint', async () => {
		const server = await gateway({ [route]: Array.from({ length: 50 }, () => BARE_429) });
		const result = await withShortRateLimitBudget(2500, async () => await run(server, node()));
		const error = userError(result);
		expect(error.message).toBe(
			`POST ${path} failed with 429: The service answered 429 Too Many Requests with an empty body (no message of its own).`,
		);
		expect(error.description).toMatch(HINT.rate);
		expect(error.description).toMatch(/Tried \d+ times\.$/);
		expect(server.posts()).toBe(Number(/Tried (\d+) times/.exec(error.description)![1]));
		expect(server.created()).toBe(0);
	});

	it('401 {"error":{"message","type":"new_api_error","code":""}}: the message, the key hint, one POST', async () => {
		const server = await gateway({ [route]: [authError(401, 'Invalid token (request id: 20261126120000123456789)')] });
		const error = userError(await run(server, node()));
		expect(error.message).toBe(`POST ${path} failed with 401: Invalid token (request id: 20261126120000123456789)`);
		expect(error.description).toBe(`${HINT.key} The service's error type "new_api_error".`);
		expect(server.posts()).toBe(1);
	});

	it('400 {"error":{"message","type","code"}}: the message as headline, code and type in the description', async () => {
		const reply = {
			status: 400,
			json: {
				error: {
					message: 'model img-1 is not available in group default',
					type: 'new_api_error',
					code: 'model_not_found',
				},
			},
		};
		const server = await gateway({ [route]: [reply] });
		const error = userError(await run(server, node()));
		expect(error.message).toBe(`POST ${path} failed with 400: model img-1 is not available in group default`);
		expect(error.description).toBe(`${HINT.invalid} The service's error code "model_not_found", type "new_api_error".`);
		expect(server.posts()).toBe(1);
	});

	it('413 with a plain-text page from a proxy: a snippet of it, one POST', async () => {
		const page =
			'<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>';
		const server = await gateway({ [route]: [{ status: 413, text: page, headers: { 'content-type': 'text/html' } }] });
		const error = userError(await run(server, node()));
		expect(error.message).toBe(`POST ${path} failed with 413: The service answered with an HTML page: "${page}"`);
		expect(error.description).toBe('The service did not accept the request.');
		expect(server.posts()).toBe(1);
	});
});

describe('Models: the model list', () => {
	it("401 wrapped: the service's message, the same hint as 403, asked once", async () => {
		const server = await gateway({ [MODELS]: [authError(401, 'Invalid token (request id: 20261126120000123456789)')] });
		const error = userError(await run(server, NODES.models(), 'sk-wrong-key-00112233'), 'sk-wrong-key-00112233');
		expect(error.message).toBe('GET /v1/models failed with 401: Invalid token (request id: 20261126120000123456789)');
		expect(error.description).toBe(`${HINT.key} The service's error type "new_api_error".`);
		expect(server.lines()).toEqual([`401 ${MODELS}`]);
	});

	it('a bare 429, then the list: retried, the list as the service gave it', async () => {
		const server = await gateway({ [MODELS]: [BARE_429] });
		const result = await run(server, NODES.models());
		expect(result.error).toBeUndefined();
		expect(result.output('Node').map((item) => item.json.id)).toEqual(['gpt-4o-mini', 'img-1']);
		expect(server.lines()).toEqual([`429 ${MODELS}`, `200 ${MODELS}`]);
	});

	it('500 with an empty body: says the body was empty, with the status; a read is not retried after a 500', async () => {
		const server = await gateway({ [MODELS]: [{ status: 500 }] });
		const error = userError(await run(server, NODES.models()));
		expect(error.message).toBe(
			'GET /v1/models failed with 500: The service answered 500 Internal Server Error with an empty body (no message of its own).',
		);
		expect(error.description).toBe('The service failed: try again later.');
		expect(server.lines()).toEqual([`500 ${MODELS}`]);
	});
});
