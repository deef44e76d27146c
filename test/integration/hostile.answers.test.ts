/**
 * Trust no byte (issue 28): what a broken or hostile server answers to a paid POST, a status poll or a read. Paid POSTs
 * never follow a redirect (one POST, an unknown outcome naming the Location); the service's task ids are checked like
 * the user's; an echoed key is redacted at the transport, in any letter case, wherever it would land; a redirect loop
 * or a redirect to file:// ends at once instead of being retried as an outage; a poll that cannot reach the service
 * keeps the advice to resume.
 */
import type { ServerResponse } from 'node:http';

import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import type { MockClient } from '../mock/process';
import { VIDEO_BYTES } from '../support/fakeVideoService';
import { generateParams as generate } from '../support/faultTable';
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';
import { findSecret, runVideo } from '../support/videoRun';

const KEY = 'sk-Hostile-Echo-5f4e3d2c1b';
const RETRY = { retryOnFail: true, maxTries: 3, waitBetweenTries: 10 };
type NodeErrorShape = Error & { description?: string; context?: IDataObject };

const at = (server: { url: string }) => ({ url: server.url, apiKey: KEY }) as unknown as MockClient;
const errorOf = (result: RunResult, node = 'Video') => result.nodeError(node) as NodeErrorShape;
/** Everything a user or an operator can see of a run: the error (message, description, context), outputs, logs. */
const visible = (result: RunResult, node = 'Video') => {
	const error = result.nodeError(node) as NodeErrorShape | undefined;
	const outputs = result.error ? [] : result.outputs(node);
	return [error?.message, error?.description, error?.context, outputs, result.logs];
};

/** A video service: the submit answer and the status body are the test's; artifacts and content as usual. */
async function videoService(submit: (res: ServerResponse) => void, status: (req: ScriptedRequest) => unknown) {
	return await startScriptedServer((req, res) => {
		const path = req.path.split('?')[0];
		if (req.method === 'POST') return submit(res);
		if (/^\/v1\/tasks\/[^/]+$/.test(path)) return sendJson(res, 200, status(req));
		if (path.endsWith('/artifacts')) return sendJson(res, 200, [{ key: 'video', type: 'video', mime_type: 'video/mp4' }]);
		if (path.endsWith('/artifacts/video/content')) {
			res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO_BYTES.length });
			return void res.end(VIDEO_BYTES);
		}
		sendJson(res, 404, { error: { message: `no route ${path}` } });
	});
}

async function withServers(count: number, test: (servers: ScriptedServer[]) => Promise<void>, answer: (i: number) => Parameters<typeof startScriptedServer>[0]) {
	const servers: ScriptedServer[] = [];
	try {
		for (let i = 0; i < count; i++) servers.push(await startScriptedServer(answer(i)));
		await test(servers);
	} finally {
		for (const server of servers) await server.close();
	}
}

describe('a paid POST never follows a redirect', () => {
	it.each([307, 302, 301, 308])('Video submit answered %i: one POST, nothing sent to the target, the Location named', async (status) => {
		let elsewhere: ScriptedServer | undefined;
		await withServers(
			2,
			async ([target, service]) => {
				elsewhere = target;
				const result = await runVideo(at(service), generate('a fox'), RETRY);
				// Retry On Fail's second try is refused by the submission guard, which quotes the first try's error.
				const error = errorOf(result);
				expect(error.message).toMatch(/^Not resubmitted: an earlier try of this item in this execution had an unknown outcome/);
				expect(error.message).toContain(
					`The outcome of POST /v1/tasks/vendor is unknown: the service answered ${status}, a redirect to ` +
						`"${target.url}/v1/tasks/vendor"; a paid request never follows a redirect (it could be sent, and paid ` +
						'for, twice).',
				);
				expect(postsTo(service, '/v1/tasks/vendor')).toHaveLength(1);
				expect(elsewhere.requests).toEqual([]);
			},
			(i) => (_req, res) => {
				if (i === 0) return sendJson(res, 200, { task_id: 'task_elsewhere' });
				res.writeHead(status, { location: `${elsewhere!.url}/v1/tasks/vendor?sig=${KEY}` });
				res.end();
			},
		);
	});

	it.each([
		['genGatewayChat', { operation: 'message', model: { __rl: true, mode: 'id', value: 'm' }, messages: { values: [{ role: 'user', content: 'hi' }] } }],
		['genGatewayImage', { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'a fox', size: '256x256' }],
	])('%s answered 307: one POST, an unknown outcome, never resent by Retry On Fail', async (type, parameters) => {
		await withServers(
			1,
			async ([service]) => {
				const result = await runWorkflow({
					nodes: [{ name: 'Node', type, parameters, credentials: true, ...RETRY }],
					credentials: { baseUrl: service.url, apiKey: KEY },
				});
				expect(errorOf(result, 'Node').message).toMatch(/\(The outcome of POST \/v1\/\S+ is unknown: the service answered 307, a redirect to "\/v1\/other"/);
				expect(service.requests.map((r) => r.method)).toEqual(['POST']);
			},
			() => (_req, res) => {
				res.writeHead(307, { location: '/v1/other' });
				res.end();
			},
		);
	});
});

describe("the service's task ids are checked like the user's", () => {
	it.each(['..', '.', '%2e%2e', 'a/b', ''])('task_id %j: an unknown outcome quoting the answer; no request on that path', async (id) => {
		const service = await videoService(
			(res) => sendJson(res, 200, { task_id: id, status: 'queued' }),
			() => ({ status: 'SUCCESS' }),
		);
		try {
			const result = await runVideo(at(service), generate('a fox'), RETRY);
			const error = errorOf(result);
			expect(error.message).toContain('The outcome of POST /v1/tasks/vendor is unknown: the service answered without a usable task_id: ');
			expect(error.message).toContain(JSON.stringify({ task_id: id, status: 'queued' }));
			expect(service.requests.map((r) => r.method)).toEqual(['POST']);
		} finally {
			await service.close();
		}
	});

	it.each([
		['a number', { task_id: 12345 }, '12345'],
		["new-api's id beside task_id", { id: 'task_a', task_id: 'task_b', status: 'queued' }, 'task_b'],
		['only an id', { id: 'video_123' }, 'video_123'],
	])('%s is a task id: polled, the video exact', async (_, answer, expected) => {
		const service = await videoService((res) => sendJson(res, 200, answer), () => ({ status: 'SUCCESS' }));
		try {
			const result = await runVideo(at(service), generate('a fox'));
			expect(result.error).toBeUndefined();
			expect(result.output()[0].json.task_id).toBe(expected);
			expect(service.requests.map((r) => `${r.method} ${r.path}`)).toContain(`GET /v1/tasks/${expected}`);
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
		} finally {
			await service.close();
		}
	});
});

describe('an echoed key is redacted at the transport, in any letter case', () => {
	const upper = KEY.toUpperCase();

	it.each([
		['fail_reason', { status: 'FAILURE', fail_reason: `invalid key ${KEY} (Bearer ${KEY})` }],
		['fail_reason upper-cased', { status: 'FAILURE', fail_reason: `INVALID KEY ${upper}` }],
		['a status nobody lists, named by the timeout', { status: `paused_${KEY}`, progress: `${KEY}%` }],
	])('%s: nowhere in the error, its context, the output or the logs', async (_, body) => {
		const service = await videoService((res) => sendJson(res, 200, { task_id: 'task_echo' }), () => body);
		try {
			const result = await runVideo(at(service), generate('a fox', { options: { pollInterval: 1, maxWait: 0.05 } }));
			expect(result.nodeError('Video')).toBeDefined();
			expect(findSecret(KEY, ...visible(result))).toEqual([]);
			expect(findSecret(upper, ...visible(result))).toEqual([]);
			expect(JSON.stringify(visible(result))).toContain('***');
		} finally {
			await service.close();
		}
	});

	it("Get Status: a status, progress and task_id that echo the key are redacted in the output", async () => {
		const service = await videoService(
			(res) => sendJson(res, 200, {}),
			() => ({ task_id: `task_${KEY}`, status: `RUNNING ${upper}`, progress: `${KEY.toLowerCase()}%` }),
		);
		try {
			const result = await runVideo(at(service), { operation: 'getStatus', taskId: 'task_echo' });
			expect(result.error).toBeUndefined();
			expect(result.output()[0].json).toEqual({ task_id: 'task_***', status: 'RUNNING ***', progress: '***%' });
			expect(findSecret(KEY.toLowerCase(), ...visible(result))).toEqual([]);
		} finally {
			await service.close();
		}
	});

	it('Image: a revised_prompt that echoes the key is redacted in the output', async () => {
		const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a0c80000000049454e44ae426082', 'hex');
		const service = await startScriptedServer((_req, res) =>
			sendJson(res, 200, { created: 1, data: [{ b64_json: png.toString('base64'), revised_prompt: `a fox, key ${upper}` }] }),
		);
		try {
			const result = await runWorkflow({
				nodes: [{ name: 'Image', type: 'genGatewayImage', parameters: { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'a fox', size: '256x256' }, credentials: true }],
				credentials: { baseUrl: service.url, apiKey: KEY },
			});
			expect(result.error).toBeUndefined();
			expect(JSON.stringify(result.output()[0].json)).toContain('a fox, key ***');
			expect(findSecret(upper, ...visible(result, 'Image'))).toEqual([]);
		} finally {
			await service.close();
		}
	});
});

describe('an echoed key is redacted in chat answers too, streamed or not', () => {
	const chatParams = (streaming: string) => ({
		operation: 'message',
		model: { __rl: true, mode: 'id', value: 'm' },
		messages: { values: [{ role: 'user', content: 'hi' }] },
		options: { streaming },
	});
	const chunk = (content: string) =>
		`data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

	it.each(['always', 'never'])('streaming %s: the answer says *** where the service echoed the key', async (streaming) => {
		const upper = KEY.toUpperCase();
		const service = await startScriptedServer((_req, res) => {
			if (streaming === 'never') {
				return sendJson(res, 200, { id: 'c1', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: `your key is ${upper}` }, finish_reason: 'stop' }] });
			}
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.end(`${chunk('your key is ')}${chunk(upper)}data: [DONE]\n\n`);
		});
		try {
			const result = await runWorkflow({
				nodes: [{ name: 'Chat', type: 'genGatewayChat', parameters: chatParams(streaming), credentials: true }],
				credentials: { baseUrl: service.url, apiKey: KEY },
			});
			expect(result.error).toBeUndefined();
			expect(JSON.stringify(result.output()[0].json)).toContain('your key is ***');
			expect(findSecret(upper, ...visible(result, 'Chat'))).toEqual([]);
			expect(postsTo(service, '/v1/chat/completions')).toHaveLength(1);
		} finally {
			await service.close();
		}
	});
});

describe('redirects on reads end at once when they cannot lead anywhere', () => {
	it.each([
		['a redirect loop', (url: string) => `${url}/v1/tasks/task_loop`],
		['a redirect to file://', () => 'file:///etc/passwd'],
	])('%s on the status: a few requests, not retried as an outage, a clear error', async (_, location) => {
		let url = '';
		const service = await startScriptedServer((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { task_id: 'task_loop' });
			res.writeHead(302, { location: location(url) });
			res.end();
		});
		url = service.url;
		try {
			const started = Date.now();
			const result = await runVideo(at(service), generate('a fox'));
			const error = errorOf(result);
			expect(error.message).toMatch(
				/^Could not check the status of video task task_loop: GET \/v1\/tasks\/task_loop failed: its redirects lead nowhere usable \(a loop, more than 5 in a row, or a target that is not http\(s\)\); not retried, the same answer would come again \(ERR_FR_(TOO_MANY_REDIRECTS|REDIRECTION_FAILURE)\)/,
			);
			expect(error.description).toMatch(/Resume it with the operation "Wait for Completion" and Task ID task_loop/);
			expect(service.requests.filter((r) => r.method === 'GET').length).toBeLessThanOrEqual(6);
			expect(Date.now() - started).toBeLessThan(5000);
		} finally {
			await service.close();
		}
	});
});

describe('a poll that cannot reach the service keeps the advice to resume', () => {
	it('connection refused after the submission: the message says the task was accepted and how to resume it', async () => {
		const service: ScriptedServer = await startScriptedServer((_req, res) => {
			sendJson(res, 200, { task_id: 'task_gone' });
			// The service goes away right after accepting the task: every poll is refused.
			setImmediate(() => void service.close());
		});
		const result = await runVideo(at(service), generate('a fox', { options: { pollInterval: 1, maxWait: 0.1 } }));
		const error = errorOf(result);
		expect(error.message).toMatch(/^Could not check the status of video task task_gone: .*ECONNREFUSED/);
		expect(error.description).toMatch(/Resume it with the operation "Wait for Completion" and Task ID task_gone/);
		expect(error.context).toMatchObject({ task_id: 'task_gone' });
		expect(postsTo(service, '/v1/tasks/vendor')).toHaveLength(1);
	}, 60_000);
});
