/**
 * One submission guard for every paid POST (nodes/shared/run/submissionGuard.ts): through n8n's engine, against loopback
 * servers that reset the connection after reading the request or refuse once, Retry On Fail never pays twice, reuses
 * what was accepted, and a loop's next run of the node submits afresh.
 */
import type { IDataObject } from 'n8n-workflow';

import { guardBytes, guardSize, MAX_KEPT_BYTES } from '../../nodes/shared/run/guardMemory';
import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams } from '../support/faultTable';
import { TestLoop } from '../support/loopNode';
import { postsTo, resetConnection, sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';

const API_KEY = 'sentinel-key-guard-7f6e5d';
const RETRY = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1 };
const PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
	'base64',
);

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const chatParams = (content: string) => ({
	operation: 'message',
	model: model('gpt-4o-mini'),
	messages: { values: [{ role: 'user', content }] },
	options: { streaming: 'never' },
});
const responseParams = (content: string) => ({
	operation: 'response',
	model: model('gk-chat-1'),
	input: { values: [{ role: 'user', content }] },
	options: { streaming: 'never' },
});
const imageParams = (prompt: string, extra: IDataObject = {}) => ({
	operation: 'generate',
	model: model('img-1'),
	prompt,
	...extra,
});

const completion = (text: string) => ({
	id: 'chatcmpl-1',
	object: 'chat.completion',
	created: 1,
	model: 'gpt-4o-mini',
	choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
});

async function runOne(
	server: ScriptedServer,
	type: string,
	parameters: IDataObject,
	extra: Partial<HarnessNode> & { input?: IDataObject[] } = {},
): Promise<RunResult> {
	const { input, ...node } = extra;
	return await runWorkflow({
		nodes: [{ name: 'Node', type, parameters, credentials: true, ...node }],
		input,
		credentials: { baseUrl: server.url, apiKey: API_KEY },
	});
}

describe('Chat and Image: Retry On Fail after an unknown outcome sends the paid request once', () => {
	const cases: Array<[string, string, IDataObject, string]> = [
		['chat completion', 'genGatewayChat', chatParams('hello'), '/v1/chat/completions'],
		['response', 'genGatewayChat', responseParams('hello'), '/v1/responses'],
		['image generation', 'genGatewayImage', imageParams('a lighthouse'), '/v1/images/generations'],
	];
	it.each(cases)('%s: a reset after the request was sent, 3 tries, 1 POST', async (_, type, parameters, path) => {
		const server = await startScriptedServer((_req, res) => resetConnection(res));
		try {
			const result = await runOne(server, type, parameters, RETRY);
			expect(result.tries('Node')).toBe(3);
			expect(result.nodeError('Node')!.message).toMatch(/unknown/);
			expect(result.nodeError('Node')!.message).not.toMatch(/\d+ characters arrived/); // not a stream error
			expect(postsTo(server, path)).toHaveLength(1);
		} finally {
			await server.close();
		}
	});
});

/** An expression that evaluates anew on every try, as agent and chat prompts commonly hold (issue 37, point 1). */
const NOW = '{{ $now.toMillis() }}';
/** Tries far enough apart that `$now.toMillis()` differs between them. */
const RETRY_LATER = { ...RETRY, waitBetweenTries: 20 };

describe('The identity of a paid request is the node run and the item, never its evaluated body', () => {
	it('chat: a system message with {{ $now }}, a stream broken after partial output: 3 tries, 1 POST', async () => {
		const server = await startScriptedServer((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Half an ans' } }] })}\n\n`);
			setTimeout(() => res.destroy(), 20);
		});
		try {
			const parameters = {
				...chatParams('hello'),
				messages: { values: [{ role: 'system', content: `=Today is ${NOW}` }, { role: 'user', content: 'hello' }] },
				options: { streaming: 'always' },
			};
			const result = await runOne(server, 'genGatewayChat', parameters, RETRY_LATER);
			expect(result.tries('Node')).toBe(3);
			expect(result.nodeError('Node')!.message).toMatch(/^Not resubmitted/);
			expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
		} finally {
			await server.close();
		}
	});

	it('video: a prompt with {{ $now }} and a lost answer: 3 tries, 1 POST', async () => {
		const server = await startScriptedServer((_req, res) => resetConnection(res));
		try {
			const result = await runOne(server, 'genGatewayVideo', generateParams(`=a fox at ${NOW}`), RETRY_LATER);
			expect(result.tries('Node')).toBe(3);
			expect(result.nodeError('Node')!.message).toMatch(/^Not resubmitted/);
			expect(postsTo(server, '/v1/tasks/vendor')).toHaveLength(1);
		} finally {
			await server.close();
		}
	});

	it('video: a prompt with {{ $now }}, accepted, then its wait fails: every retry waits for that task, 1 POST', async () => {
		const server = await startScriptedServer((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { task_id: 'task_now' });
			sendJson(res, 200, { task_id: 'task_now', status: 'FAILURE', fail_reason: 'blocked' });
		});
		try {
			const result = await runOne(server, 'genGatewayVideo', generateParams(`=a fox at ${NOW}`), RETRY_LATER);
			expect(result.tries('Node')).toBe(3);
			expect(postsTo(server, '/v1/tasks/vendor')).toHaveLength(1);
			expect(server.requests.filter((request) => request.path === '/v1/tasks/task_now')).toHaveLength(3);
		} finally {
			await server.close();
		}
	});

});

describe('The memory of failed runs is bounded (issue 37, point 8)', () => {
	it('failed Image runs without Retry On Fail keep nothing: no answer (base64 images included) stays in memory', async () => {
		const server = await startScriptedServer((_req, res) =>
			sendJson(res, 200, { created: 1, data: [{ b64_json: Buffer.alloc(6 * 1024 * 1024, 1).toString('base64') }] }),
		);
		try {
			const before = { size: guardSize(), bytes: guardBytes() };
			for (let run = 0; run < 4; run++) {
				const result = await runOne(server, 'genGatewayImage', imageParams('a lighthouse', { options: { responseFormat: 'b64_json' } }));
				expect(result.nodeError('Node')?.message).toMatch(/not an image/);
			}
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(4);
			expect({ size: guardSize(), bytes: guardBytes() }).toEqual(before);
		} finally {
			await server.close();
		}
	});

	it('with Retry On Fail the answer is kept for the retry (reused, nothing paid again), within the bound', async () => {
		const server = await startScriptedServer((_req, res) =>
			sendJson(res, 200, { created: 1, data: [{ b64_json: Buffer.alloc(6 * 1024 * 1024, 1).toString('base64') }] }),
		);
		try {
			const result = await runOne(server, 'genGatewayImage', imageParams('a lighthouse', { options: { responseFormat: 'b64_json' } }), RETRY);
			expect(result.tries('Node')).toBe(3);
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(1);
			expect(guardBytes()).toBeLessThanOrEqual(MAX_KEPT_BYTES);
		} finally {
			await server.close();
		}
	});
});

describe('A run longer than the memory\'s hour keeps its entries until it ends (found by an adversarial review)', () => {
	it('a run longer than an hour, then Retry On Fail: the early rows must not be paid again', async () => {
		const realNow = Date.now.bind(Date);
		let offset = 0;
		const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
		let refused = false;
		const server = await startScriptedServer((req, res) => {
			const asked = (JSON.parse(req.body) as { messages: Array<{ content: string }> }).messages[0].content;
			if (asked === 'row 2' && offset === 0) offset = 61 * 60 * 1000;
			if (asked === 'row 3' && !refused) {
				refused = true;
				return sendJson(res, 400, { error: { message: 'try again' } });
			}
			sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: `ok ${asked}` }, finish_reason: 'stop' }] });
		});
		try {
			await runWorkflow({
				nodes: [{
					name: 'Chat', type: 'genGatewayChat', credentials: true, retryOnFail: true, maxTries: 2, waitBetweenTries: 1,
					parameters: { operation: 'message', model: { __rl: true, mode: 'id', value: 'm' }, messages: { values: [{ role: 'user', content: '={{ $json.q }}' }] }, options: { streaming: 'never' } },
				}],
				input: [0, 1, 2, 3].map((i) => ({ q: `row ${i}` })),
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			const asked = postsTo(server, '/v1/chat/completions').map((r) => (JSON.parse(r.body) as { messages: Array<{ content: string }> }).messages[0].content);
			expect(asked).toEqual(['row 0', 'row 1', 'row 2', 'row 3', 'row 3']);
		} finally {
			spy.mockRestore();
			await server.close();
		}
	});
});

describe('A paid POST answered 500 is an unknown outcome, never resent (nodes/shared/transport/retry.ts)', () => {
	const cases: Array<[string, string, IDataObject, string]> = [
		['video submission', 'genGatewayVideo', generateParams('a fox'), '/v1/tasks/vendor'],
		['chat completion', 'genGatewayChat', chatParams('hello'), '/v1/chat/completions'],
		['image generation', 'genGatewayImage', imageParams('a lighthouse'), '/v1/images/generations'],
	];
	it.each(cases)('%s: 500 once, Retry On Fail 3 tries, 1 POST', async (_, type, parameters, path) => {
		// The service created the work, then failed while answering.
		const server = await startScriptedServer((_req, res) => sendJson(res, 500, { error: { message: 'internal error' } }));
		try {
			const result = await runOne(server, type, parameters, RETRY);
			expect(result.tries('Node')).toBe(3);
			expect(result.nodeError('Node')!.message).toMatch(/unknown.*answered 500 \(internal error\)/);
			expect(postsTo(server, path)).toHaveLength(1);
		} finally {
			await server.close();
		}
	});

	it('502 is retried inside the node (nothing was created), then the task is accepted once', async () => {
		const server = await startScriptedServer((req, res, index) => {
			if (req.method === 'POST' && index === 0) return sendJson(res, 502, { error: { message: 'bad gateway' } });
			if (req.method === 'POST') return sendJson(res, 200, { task_id: 'task_1' });
			sendJson(res, 404, { error: { message: 'no' } });
		});
		try {
			const result = await runOne(server, 'genGatewayVideo', generateParams('a fox', { waitForCompletion: false }));
			expect(result.error).toBeUndefined();
			expect(result.output()[0].json.task_id).toBe('task_1');
			expect(postsTo(server, '/v1/tasks/vendor')).toHaveLength(2);
		} finally {
			await server.close();
		}
	});
});

describe('Retry On Fail reuses what was accepted', () => {
	it('chat: item 0 answered, item 1 refused once; the retry sends only item 1 again', async () => {
		const server = await startScriptedServer((req, res, index) => {
			const asked = (JSON.parse(req.body) as { messages: Array<{ content: string }> }).messages[0].content;
			if (asked === 'second' && index === 1) return sendJson(res, 400, { error: { message: 'try again' } });
			sendJson(res, 200, completion(`answer to ${asked} #${index}`));
		});
		try {
			const result = await runOne(
				server,
				'genGatewayChat',
				{ ...chatParams('={{ $json.q }}'), simplify: true },
				{ ...RETRY, input: [{ q: 'first' }, { q: 'second' }] },
			);
			expect(result.error).toBeUndefined();
			expect(result.tries('Node')).toBe(2);
			const posts = postsTo(server, '/v1/chat/completions').map((r) => JSON.parse(r.body).messages[0].content);
			expect(posts).toEqual(['first', 'second', 'second']);
			expect(JSON.stringify(result.output()[0].json)).toContain('answer to first #0');
		} finally {
			await server.close();
		}
	});

	it('image: the download fails once; the retry downloads again without generating again ({{ $now }} in the prompt)', async () => {
		let downloads = 0;
		const server = await startScriptedServer((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: `${server.url}/files/a.png` }] });
			downloads++;
			if (downloads === 1) return sendJson(res, 404, { error: { message: 'not yet' } });
			res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
			res.end(PNG);
		});
		try {
			const result = await runOne(server, 'genGatewayImage', imageParams(`=a lighthouse at ${NOW}`), RETRY_LATER);
			expect(result.error).toBeUndefined();
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(1);
			expect(downloads).toBe(2);
			expect(result.output()[0].binary?.data).toBeDefined();
		} finally {
			await server.close();
		}
	});
});

describe('A new run of the node in the same execution (Loop Over Items) is not a retry', () => {
	let mock: MockClient;
	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey: API_KEY });
	});
	afterAll(async () => await mock?.stop());

	it('an identical request at the same item index in the next batch is submitted, not given the earlier video', async () => {
		await mock.reset();
		// Batches of 2: [fox, cat (FAILURE)] then [fox, dog]. Continue On Fail keeps the first batch's error item, so
		// the node's memory of batch 1 is kept (for a retry); batch 2's fox must still be a new task.
		const input = [
			{ prompt: '[[instant]] a fox' },
			{ prompt: '[[instant]] [[fail=blocked]] a cat' },
			{ prompt: '[[instant]] a fox' },
			{ prompt: '[[instant]] a dog' },
		];
		const result = await runWorkflow({
			nodes: [
				{ name: 'Loop', type: 'testLoop', parameters: { batchSize: 2 } },
				{
					name: 'Video',
					type: 'genGatewayVideo',
					parameters: generateParams('={{ $json.prompt }}', { downloadVideo: false }),
					credentials: true,
					continueOnFail: true,
					loopBackTo: 'Loop',
				},
			],
			input,
			credentials: { baseUrl: mock.url, apiKey: mock.apiKey },
			extraNodeTypes: [new TestLoop()],
		});
		const runs = result.run.data.resultData.runData.Video;
		expect(runs).toHaveLength(2);
		const ids = runs.map((run) => (run.data?.main?.[0] ?? []).map((item) => item.json.task_id));
		expect(ids[1][0]).toBeDefined();
		expect(ids[1][0]).not.toBe(ids[0][0]);
		expect((runs[1].data?.main?.[0] ?? [])[0].json.resumed).toBe(false);
		expect(await mock.submissions()).toBe(4);
	});
});
