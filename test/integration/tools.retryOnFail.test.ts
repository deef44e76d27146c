/**
 * The package's nodes called as an AI agent's tools (usableAsTool: n8n-core's createNodeAsTool and
 * makeHandleToolInvocation, the path of the Tools Agent, the AI Agent Tool and the MCP Server Trigger). n8n gives every
 * Retry On Fail try of a tool a new run index, so a guard keyed by the run index paid again on every try after an
 * unknown outcome (found by an adversarial review of issue 37): a tool call is known by its agent and its arguments
 * (submissionGuard.ts, toolScope).
 */
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';
import { chatTool, imageTool, runWithTool } from '../support/toolCaller';

const API_KEY = 'sk-attack-tool-1234567890';
const PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
	'base64',
);
const model = (value: string) => ({ __rl: true, mode: 'id', value });
const imageParams = { operation: 'generate', model: model('img-1'), prompt: 'a lighthouse', toolDescription: 'make an image' };
const chatParams = {
	operation: 'message',
	model: model('gpt-4o-mini'),
	messages: { values: [{ role: 'user', content: 'hello' }] },
	options: { streaming: 'never' },
	toolDescription: 'chat',
};
const RETRY = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1 };

const outputOf = (run: Awaited<ReturnType<typeof runWithTool>>) =>
	run.data.resultData.runData.Caller?.[0]?.data?.main?.[0]?.[0]?.json;

it('baseline: the Image tool generates once when the service answers', async () => {
	const server = await startScriptedServer((_req, res) =>
		sendJson(res, 200, { created: 1, data: [{ b64_json: PNG.toString('base64') }] }),
	);
	try {
		const run = await runWithTool({ tool: imageTool(), toolParameters: imageParams, credentials: { baseUrl: server.url, apiKey: API_KEY } });
		expect(run.data.resultData.error).toBeUndefined();
		expect(postsTo(server, '/v1/images/generations')).toHaveLength(1);
	} finally {
		await server.close();
	}
});

it.each([
	['image', imageTool, imageParams, '/v1/images/generations'],
	['chat', chatTool, chatParams, '/v1/chat/completions'],
])('%s tool with Retry On Fail, answered 500 (unknown outcome): must POST once', async (_n, make, params, path) => {
	const server = await startScriptedServer((_req, res) => sendJson(res, 500, { error: { message: 'internal' } }));
	try {
		const run = await runWithTool({ tool: make(), toolParameters: params, toolSettings: RETRY, credentials: { baseUrl: server.url, apiKey: API_KEY } });
		expect(postsTo(server, path)).toHaveLength(1);
		// n8n ran the tool three times: the two tries after the first were refused, not sent.
		expect(run.data.resultData.runData.Tool).toHaveLength(3);
	} finally {
		await server.close();
	}
});

it('two tool calls supplied at once (Agent V2 batch, one tool per item), different prompts: two requests, both answered', async () => {
	let n = 0;
	const server = await startScriptedServer((_req, res) => {
		const i = ++n;
		setTimeout(() => sendJson(res, 200, { created: 1, data: [{ b64_json: PNG.toString('base64'), revised_prompt: `answer ${i}` }] }), 300);
	});
	try {
		const run = await runWithTool({
			tool: imageTool(),
			toolParameters: { ...imageParams, prompt: "=a picture of {{ $fromAI('subject') }}" },
			callerParameters: { calls: 2, parallel: true, supplyPerCall: true },
			credentials: { baseUrl: server.url, apiKey: API_KEY },
		});
		const results = (outputOf(run) as { results: string[] }).results;
		expect(postsTo(server, '/v1/images/generations')).toHaveLength(2);
		expect(results.every((r) => !r.startsWith('ERROR'))).toBe(true);
	} finally {
		await server.close();
	}
});

/**
 * Issue 51, defect 3: a model that answers "two pictures of a lighthouse" with two parallel calls of the same arguments
 * got one POST, and the second call a false "unknown outcome" (both calls shared one slot, keyed by agent and
 * arguments). Two calls asked are two requests; n8n's Retry On Fail and the agent's own retry of a call are not.
 */
describe('identical tool calls (issue 51)', () => {
	const lighthouse = { subject: 'lighthouse' };
	const subjectParams = { ...imageParams, prompt: "=a picture of {{ $fromAI('subject') }}" };
	/** Answers every POST after `delayMs` (so that one step's calls overlap), the ones numbered in `fail` with a 500. */
	const imageServer = async (fail: number[] = [], delayMs = 200) => {
		let n = 0;
		return await startScriptedServer((_req, res) => {
			const i = ++n;
			setTimeout(() => {
				if (fail.includes(i)) sendJson(res, 500, { error: { message: 'internal' } });
				else sendJson(res, 200, { created: 1, data: [{ b64_json: PNG.toString('base64'), revised_prompt: `image ${i}` }] });
			}, delayMs);
		});
	};
	const results = (run: Awaited<ReturnType<typeof runWithTool>>) => (outputOf(run) as { results: string[] }).results;

	it('two identical calls in one step: two requests, two images, no "unknown outcome"', async () => {
		const server = await imageServer();
		try {
			const run = await runWithTool({
				tool: imageTool(),
				toolParameters: subjectParams,
				callerParameters: { steps: JSON.stringify([[lighthouse, lighthouse]]) },
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(2);
			expect(results(run).filter((r) => r.startsWith('ERROR'))).toEqual([]);
		} finally {
			await server.close();
		}
	});

	it('three identical calls in one step, the tool with Retry On Fail, the first answered 500: three requests, the 500 not resent', async () => {
		const server = await imageServer([1]);
		try {
			const run = await runWithTool({
				tool: imageTool(),
				toolParameters: subjectParams,
				toolSettings: RETRY,
				callerParameters: { steps: JSON.stringify([[lighthouse, lighthouse, lighthouse]]) },
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(3);
			const errors = results(run).filter((r) => r.startsWith('ERROR'));
			expect(errors).toHaveLength(1);
			expect(errors[0]).toMatch(/Not resubmitted: an earlier try of this item in this execution had an unknown outcome/);
		} finally {
			await server.close();
		}
	});

	it("the agent's own retry (its Retry On Fail) asks the same step again: nothing is sent twice", async () => {
		const server = await imageServer([1]);
		try {
			const run = await runWithTool({
				tool: imageTool(),
				toolParameters: subjectParams,
				callerParameters: { steps: JSON.stringify([[lighthouse, lighthouse]]), failOnError: true },
				callerSettings: { retryOnFail: true, maxTries: 3, waitBetweenTries: 1 },
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			// Try 1: two requests, one unknown (500). Tries 2 and 3: the unknown one refused, the answered one reused.
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(2);
			expect(run.data.resultData.error?.message).toMatch(/Not resubmitted/);
		} finally {
			await server.close();
		}
	});

	it('the same call in two steps, one after the other: two requests', async () => {
		const server = await imageServer();
		try {
			const run = await runWithTool({
				tool: imageTool(),
				toolParameters: subjectParams,
				callerParameters: { steps: JSON.stringify([[lighthouse], [lighthouse]]) },
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(2);
			expect(results(run).filter((r) => r.startsWith('ERROR'))).toEqual([]);
		} finally {
			await server.close();
		}
	});
});

/**
 * n8n 2.x's Agent V3 hands a step's tool calls to the engine (EngineRequest): each call is a node run of its own, with
 * the call's id (`toolCallId`) in its item, and the tool's Retry On Fail keeps that run's index. There the identity is
 * the node run and the item, as for any node: two identical calls are two requests, a retry of one is not.
 */
describe('identical tool calls on the engine-request path (n8n 2.x, Agent V3)', () => {
	const params = { ...imageParams, prompt: '=a picture of {{ $json.subject }}' };
	const steps = JSON.stringify([[{ subject: 'lighthouse' }, { subject: 'lighthouse' }]]);

	it.each([
		['both answered', [], 2, 0],
		['the first answered 500, the tool with Retry On Fail', [1], 2, 1],
	])('%s: two requests', async (_n, fail, posts, errors) => {
		let n = 0;
		const server = await startScriptedServer((_req, res) => {
			if ((fail as number[]).includes(++n)) return sendJson(res, 500, { error: { message: 'internal' } });
			sendJson(res, 200, { created: 1, data: [{ b64_json: PNG.toString('base64') }] });
		});
		try {
			const run = await runWithTool({
				tool: imageTool(),
				toolParameters: params,
				toolSettings: RETRY,
				callerParameters: { steps },
				engine: true,
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(postsTo(server, '/v1/images/generations')).toHaveLength(posts as number);
			// Two node runs of the tool, one per call (a retry keeps its run: the 500's retries were refused, not sent).
			expect(run.data.resultData.runData.Tool).toHaveLength(2);
			const results = (outputOf(run) as { results: string[] }).results;
			expect(results).toHaveLength(2);
			expect(results.filter((r) => /error/i.test(r))).toHaveLength(errors as number);
		} finally {
			await server.close();
		}
	});
});
