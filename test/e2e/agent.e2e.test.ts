// examples/ai-agent-video-tool.json in a real n8n (2.41.1 by default; 1.123.81 with GEN_GATEWAY_E2E_N8N=1), served by `n8n start` and driven over HTTP as a
// chat client drives it: a message to the Chat Trigger's production URL → n8n's AI Agent, whose model is this package's
// Gen Gateway Chat Model (our own chat model on the package's transport, inside n8n's @n8n/ai-node-sdk adapter and
// LangChain's agent, which nobody here wrote) on the Gen Gateway credential → the mock's "model" calls the Video tool (scripted by [[tool=...]] / [[arg.KEY=VALUE]] markers
// in the message, see test/mock/toolCalls.ts) → the Gen Gateway Video tool submits once, waits, downloads → the
// model's final answer reaches the chat. The workflow file runs unchanged on 2.x; only its credential is imported.
// A copy whose Chat Trigger streams (responseMode 'streaming') makes the agent stream the model too: the mock's
// streamed tool calls, read by LangChain.
// n8n 1.x has no SDK: there the same runs go through the documented alternative (the example with n8n's OpenAI Chat
// Model on an OpenAI credential whose Base URL is the mock's /v1), and the unchanged example proves that the package
// still loads with the sub-node listed, which says it needs n8n 2.x when a run reaches it.
// On 2.x the same sub-node also serves n8n's Basic LLM Chain (a Chat Trigger → chain workflow on the same n8n).
// Time: about 55-60 s (2.41.1 and 1.123.81, quiet machine): one n8n start, sign-in, Chromium for the run's screenshot,
// the imports over REST and six chat runs (the chain's: 0.2 s; the two identical tool calls' not measured yet); more
// when it is the file that installs n8n or Chromium.
import { randomUUID } from 'crypto';
import * as path from 'path';

import { spawnMockProcess, type MockClient } from '../mock/process';
import type { LogEntry } from '../mock/types';
import { openExecution, showSubRun } from './browser/agentRun';
import { timed } from '../timing/phases';
import { launchChromium } from './browser/chromium';
import { openWorkflow, signIn, UI_TIMEOUT } from './browser/editor';
import { searchNodes } from './browser/nodeCreator';
import { FAILURE_DIR, step } from './browser/screenshots';
import { exampleCredential, loadExample, type ExampleWorkflow } from './workflows/examples';
import { unflatten } from './workflows/executions';
import { logCursor, RUN_TIMEOUT, SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import { createN8nHome, DEFAULT_OWNER, e2eMajor, FRESH_CONNECTION, nodeType, PACKAGE_NAME, randomId, type N8nHome, type N8nServer } from './n8n';

const FILE = 'ai-agent-video-tool.json';
/** The OpenAI credential of the alternative route (npm start imports the same one). */
const OPENAI_CREDENTIAL = { id: 'GenGatewayOpenAI', name: 'Gen Gateway as OpenAI (mock)' } as const;
const MP4_FTYP = Buffer.from('ftyp');
/** The README's picture of the agent's run, rewritten with GEN_GATEWAY_UPDATE_SCREENSHOTS=1 (else a temporary copy). */
const RUN_SCREENSHOT = path.join(
	process.env.GEN_GATEWAY_UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/screenshots') : FAILURE_DIR,
	'ai-agent-run.png',
);

interface TriggerNode {
	type: string;
	webhookId: string;
	parameters: { options: Record<string, unknown> };
}
const chatTrigger = (workflow: ExampleWorkflow) =>
	workflow.nodes.find((node) => node.type === '@n8n/n8n-nodes-langchain.chatTrigger') as unknown as TriggerNode;

/** What supplyData says on n8n 1.x (nodes/GenGatewayChatModel). */
const NEEDS_N8N_2 = /Gen Gateway Chat Model needs n8n 2\.x/;
const MODEL_NODE = 'Gen Gateway Chat Model';

/**
 * The documented alternative (docs/ai-agent.md), the route on n8n 1.x: the same workflow with n8n's OpenAI Chat Model
 * (version 1.2, chat completions only, on both lines) on an OpenAI credential whose Base URL is the service's /v1.
 */
function openAiRoute(example: ExampleWorkflow): ExampleWorkflow {
	const copy = JSON.parse(JSON.stringify(example)) as ExampleWorkflow;
	const index = copy.nodes.findIndex((node) => node.name === MODEL_NODE);
	copy.nodes[index] = {
		...copy.nodes[index],
		type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
		typeVersion: 1.2,
		parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
		credentials: { openAiApi: { ...OPENAI_CREDENTIAL } },
	} as (typeof copy.nodes)[number];
	return copy;
}

/** A copy with its own id, name and webhook. */
function renamedCopy(example: ExampleWorkflow, id: string, suffix: string): ExampleWorkflow {
	const copy = JSON.parse(JSON.stringify(example)) as ExampleWorkflow;
	copy.id = id;
	copy.name = `${example.name} (${suffix})`;
	chatTrigger(copy).webhookId = randomUUID();
	return copy;
}

/** The example without a model: its agent's Chat Model connector is free (for the editor's model picker). */
function withoutModel(example: ExampleWorkflow): ExampleWorkflow {
	const copy = renamedCopy(example, 'ggExampleAgentNoM', 'no model yet');
	copy.nodes = copy.nodes.filter((node) => node.name !== MODEL_NODE);
	delete (copy.connections as Record<string, unknown>)[MODEL_NODE];
	return copy;
}

/** The version of n8n's Basic LLM Chain that n8n 2.41.1 adds by default (its highest; the node names no defaultVersion). */
const CHAIN_LLM_VERSION = 1.9;
/** The chat model the chain's Gen Gateway Chat Model picks (not the example's, so the parameter is seen to travel). */
const CHAIN_MODEL = 'gk-chat-1';

/**
 * The example's Chat Trigger and Gen Gateway Chat Model around n8n's Basic LLM Chain instead of the agent: the
 * sub-node on the chain's Model connector, no tools, the prompt from the chat message.
 */
function llmChain(example: ExampleWorkflow): ExampleWorkflow {
	const copy = renamedCopy(example, 'ggExampleLlmChn1', 'Basic LLM Chain');
	const trigger = copy.nodes.find((node) => node.type === '@n8n/n8n-nodes-langchain.chatTrigger')!;
	const model = copy.nodes.find((node) => node.name === MODEL_NODE)!;
	model.parameters = { ...model.parameters, model: { __rl: true, mode: 'id', value: CHAIN_MODEL } };
	const chain = {
		id: 'llm-chain',
		name: 'Basic LLM Chain',
		type: '@n8n/n8n-nodes-langchain.chainLlm',
		typeVersion: CHAIN_LLM_VERSION,
		position: [260, 0],
		parameters: { promptType: 'auto', text: '={{ $json.chatInput }}' },
	};
	copy.nodes = [trigger, chain, model];
	copy.connections = {
		[trigger.name]: { main: [[{ node: chain.name, type: 'main', index: 0 }]] },
		[MODEL_NODE]: { ai_languageModel: [[{ node: chain.name, type: 'ai_languageModel', index: 0 }]] },
	};
	return copy;
}

/** The example with a streaming Chat Trigger (its own id and webhook). */
function streamingCopy(example: ExampleWorkflow): ExampleWorkflow {
	const copy = renamedCopy(example, 'ggExampleAgentSt', 'streaming');
	const trigger = chatTrigger(copy);
	trigger.parameters.options = { ...trigger.parameters.options, responseMode: 'streaming' };
	return copy;
}

/**
 * Production webhooks answer once n8n has registered the active workflows' webhooks, shortly after its REST API: a
 * CORS preflight asks which methods the path has without running anything (204 with POST once registered).
 */
async function webhookRegistered(url: string, origin: string, timeoutMs = 120_000): Promise<void> {
	await timed('wait', 'chat webhook registration', () => pollRegistered(url, origin, timeoutMs));
}

async function pollRegistered(url: string, origin: string, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const preflight = await fetch(url, { method: 'OPTIONS', headers: { ...FRESH_CONNECTION, origin, 'access-control-request-method': 'POST' } });
		if (preflight.status === 204 && /\bPOST\b/.test(preflight.headers.get('access-control-allow-methods') ?? '')) return;
		if (Date.now() > deadline) throw new Error(`the chat webhook ${url} was not registered in time (${preflight.status})`);
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
}

const chatCalls = (log: LogEntry[]) => log.filter((entry) => entry.method === 'POST' && entry.path === '/v1/chat/completions');

describe('AI Agent example in a real n8n: Gen Gateway Chat Model as the model, Gen Gateway Video as a tool', () => {
	const apiKey = `sk-e2e-agent-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer;
	let cookie: string;
	let workflow: ExampleWorkflow;
	let chatUrl: string;
	let streamingChatUrl: string;
	/** n8n 1.x only: the unchanged example (the sub-node), whose run must say it needs n8n 2.x. */
	let subNodeOn1: ExampleWorkflow | undefined;
	let subNodeOn1Url: string | undefined;
	/** n8n 2.x only: the example without its model, never activated, opened in the editor. */
	let noModel: ExampleWorkflow | undefined;
	/** n8n 2.x only: Chat Trigger → Basic LLM Chain with Gen Gateway Chat Model as its model. */
	let chain: ExampleWorkflow | undefined;
	let chainUrl: string | undefined;
	/** The execution of the first chat message's run (opened in the editor below). */
	let executionId: string | undefined;

	beforeAll(async () => {
		// The video takes 1.6 s at the mock: the tool's first status check finds it unfinished and really waits.
		mock = await spawnMockProcess({ apiKey, defaults: { queuedMs: 100, runMs: 1500 } });
		home = await createN8nHome({ build: true });
		// Imports and activation through the server's REST API, as the editor does (no CLI process per import).
		server = await home.startServer();
		cookie = await server.ownerSession();
		await server.importCredentials([
			exampleCredential(mock.url, apiKey),
			// n8n's own OpenAI credential (the alternative route, 1.x): Base URL = the service's /v1 (the package's
			// credential takes the root).
			{ ...OPENAI_CREDENTIAL, type: 'openAiApi', data: { apiKey, url: `${mock.url}/v1` } },
		]);
		const example = loadExample(FILE);
		workflow = e2eMajor() === 1 ? openAiRoute(example) : example;
		const streaming = streamingCopy(workflow);
		if (e2eMajor() === 1) subNodeOn1 = renamedCopy(example, 'ggExampleAgentV1', 'sub-node on n8n 1.x');
		else {
			noModel = withoutModel(example);
			chain = llmChain(example);
		}
		const all = [workflow, streaming, ...(subNodeOn1 ? [subNodeOn1] : []), ...(chain ? [chain] : [])];
		const imported = [...all, ...(noModel ? [noModel] : [])];
		// n8n 1.x gives each workflow an id of its own: the test goes on with n8n's.
		(await server.importWorkflows(imported)).forEach((id, index) => (imported[index].id = id));
		// Activated (published) as the editor's toggle does: the Chat Triggers' production webhooks register at once.
		await server.activateWorkflows(all.map(({ id }) => id));
		chatUrl = `${server.url}/webhook/${chatTrigger(workflow).webhookId}/chat`;
		streamingChatUrl = `${server.url}/webhook/${chatTrigger(streaming).webhookId}/chat`;
		if (subNodeOn1) subNodeOn1Url = `${server.url}/webhook/${chatTrigger(subNodeOn1).webhookId}/chat`;
		if (chain) chainUrl = `${server.url}/webhook/${chatTrigger(chain).webhookId}/chat`;
		for (const url of [chatUrl, streamingChatUrl, ...(subNodeOn1Url ? [subNodeOn1Url] : []), ...(chainUrl ? [chainUrl] : [])]) {
			await webhookRegistered(url, server.url);
		}
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	/** One chat message as n8n's chat widget sends it (the owner's session cookie: the example asks for an n8n user). */
	const sendMessage = async (chatInput: string, withCookie = true, url = chatUrl) =>
		await timed('run', 'chat message', async () => {
			const response = await fetch(url, {
				method: 'POST',
				headers: { ...FRESH_CONNECTION, 'content-type': 'application/json', ...(withCookie ? { cookie } : {}) },
				body: JSON.stringify({ action: 'sendMessage', sessionId: randomId(12), chatInput }),
				signal: AbortSignal.timeout(RUN_TIMEOUT - 10_000),
			});
			const text = await response.text();
			return { status: response.status, text: async () => text };
		});

	it('the chat is closed to callers who are not logged in to n8n (the example is not an open paid endpoint)', async () => {
		const seen = await logCursor(mock);
		const response = await sendMessage('Make a video [[tool=Generate_Video]]', false);
		expect(response.status).toBe(401);
		expect(chatCalls(await seen())).toEqual([]);
	});

	it(
		'a chat message: the model calls Generate_Video once, the video is made at the mock, the answer reaches the chat (n8n1-smoke)',
		async () => {
			const seen = await logCursor(mock);
			const text = 'Make a video of a red fox running through fresh snow at sunrise';
			const response = await sendMessage(`${text} [[tool=Generate_Video]] [[arg.duration=6]] [[arg.aspect_ratio=9:16]]`);
			const answer = await response.text();
			expect({ status: response.status, answer }).toMatchObject({ status: 200 });
			const log = await seen();

			// Exactly one paid submission, with the arguments the model chose (the prompt from the message).
			const submissions = submissionsIn(log);
			expect(submissions).toHaveLength(1);
			expect(submissions[0].body).toEqual({ model: 'sd_2.0_fast_discount', prompt: text, duration: 6, aspect_ratio: '9:16' });
			const taskId = submissions[0].taskId!;
			expect(taskId).toMatch(/^task_/);

			// Two model turns through the model node (Gen Gateway Chat Model; n8n's OpenAI Chat Model on 1.x): the first
			// offered the three tools, the second carried the tool's answer.
			const calls = chatCalls(log);
			expect(calls).toHaveLength(2);
			const first = calls[0].body as { model: string; tools: Array<{ function: { name: string } }> };
			expect(first.model).toBe('gpt-4o-mini');
			expect(first.tools.map((tool) => tool.function.name).sort()).toEqual(['Generate_Image', 'Generate_Video', 'List_Models']);
			expect(calls.every((call) => call.authorized && call.status === 200)).toBe(true);
			expect(workflow.nodes.find((node) => node.name === MODEL_NODE)?.type).toBe(
				e2eMajor() === 1 ? '@n8n/n8n-nodes-langchain.lmChatOpenAi' : nodeType('genGatewayChatModel'),
			);

			// What the model got back from the tool: compact JSON with the task, its status and the request, no bytes.
			const messages = (calls[1].body as { messages: Array<{ role: string; content: string }> }).messages;
			const toolMessage = messages[messages.length - 1];
			expect(toolMessage.role).toBe('tool');
			expect(toolMessage.content).toContain(taskId);
			expect(toolMessage.content).toContain('"status":"SUCCESS"');
			expect(toolMessage.content.length).toBeLessThan(2000);
			expect(toolMessage.content).not.toMatch(/video\/mp4","data"|"binary"|[A-Za-z0-9+/]{200,}/);

			// The chat gets the model's final answer (lastNode: the agent's `output`), which quotes the tool's result.
			const body = JSON.parse(answer) as { output: string };
			expect(body.output).toContain('Tool Generate_Video returned:');
			expect(body.output).toContain(taskId);

			// The mp4 stays on the tool's output item as binary data (on disk), byte for byte the mock's.
			const executions = await server.rest('GET', `/rest/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId: workflow.id }))}`, { cookie });
			const [latest] = executions.body.data.results as Array<{ id: string; status: string }>;
			expect(latest.status).toBe('success');
			executionId = latest.id;
			const execution = await server.rest('GET', `/rest/executions/${latest.id}`, { cookie });
			const runData = unflatten(execution.body.data.data).resultData.runData;
			const [videoItem] = runData['Generate Video'][0].data.ai_tool[0];
			expect(videoItem.json).toMatchObject({ task_id: taskId, status: 'SUCCESS', model: 'sd_2.0_fast_discount' });
			expect(videoItem.binary.data).toMatchObject({ mimeType: 'video/mp4', fileName: `${taskId}.mp4` });
			const bytes = await home.binaryFile(videoItem.binary.data.id);
			expect(bytes.subarray(4, 8)).toEqual(MP4_FTYP);
			expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));
		},
		RUN_TIMEOUT,
	);

	it(
		"the run opens in n8n's editor with every node of the example on its canvas (the README's screenshot); the agent's Chat Model + offers Gen Gateway Chat Model",
		async () => {
			if (!executionId) throw new Error('needs the chat run above');
			const browser = await launchChromium({ width: 1440, height: 1100 }, 2);
			try {
				const { page } = browser;
				await step(page, 'sign in', () => signIn(page, server.url, DEFAULT_OWNER.email, DEFAULT_OWNER.password));
				await step(page, 'open the execution', () =>
					openExecution(page, server.url, workflow.id, executionId!, ['AI Agent', 'Gen Gateway Chat Model', 'Generate Video', 'Generate Image', 'List Models']),
				);
				await step(page, 'show the Video tool run', () => showSubRun(page, 'Generate Video'));
				const png = await page.screenshot({ path: RUN_SCREENSHOT, animations: 'disabled', caret: 'hide' });
				expect(png.subarray(1, 4).toString()).toBe('PNG');

				// The agent's free Chat Model connector: its "+" opens the language models, and a search for
				// "Gen Gateway" there offers the Chat Model and none of the package's other nodes.
				await step(page, 'open the agent without a model', () => openWorkflow(page, server.url, noModel!.id));
				const modelInput = page.locator('[data-test-id="canvas-node-input-handle"][data-connection-type="ai_languageModel"][data-node-name="AI Agent"]');
				await step(page, "click the agent's Chat Model +", () => modelInput.locator('[data-test-id="canvas-handle-plus"]').click({ timeout: UI_TIMEOUT }));
				const results = await step(page, 'search "Gen Gateway" among the models', () => searchNodes(page, 'Gen Gateway'));
				expect(results.filter((result) => result.type.startsWith(`${PACKAGE_NAME}.`))).toEqual([
					{ type: nodeType('genGatewayChatModel'), name: 'Gen Gateway Chat Model' },
				]);
			} finally {
				await browser.close();
			}
		},
		RUN_TIMEOUT,
	);

	it(
		'streamed: the model streams its tool call and its answer, the chat receives the answer in chunks',
		async () => {
			const seen = await logCursor(mock);
			const text = 'A paper boat drifting down a rainy street';
			const response = await sendMessage(`${text} [[tool=Generate_Video]]`, true, streamingChatUrl);
			const raw = await response.text();
			expect({ status: response.status, raw }).toMatchObject({ status: 200 });
			const log = await seen();

			const submissions = submissionsIn(log);
			expect(submissions).toHaveLength(1);
			// Duration and ratio not given in the message: the $fromAI defaults of the example (5 s, 16:9).
			expect(submissions[0].body).toEqual({ model: 'sd_2.0_fast_discount', prompt: text, duration: 5, aspect_ratio: '16:9' });
			const taskId = submissions[0].taskId!;
			const calls = chatCalls(log);
			expect(calls).toHaveLength(2);
			expect(calls.map((call) => (call.body as { stream?: boolean }).stream)).toEqual([true, true]);

			// n8n's chat stream: one JSON object per chunk; the 'item' chunks carry the answer's text.
			const chunks = raw
				.split('\n')
				.map((line) => line.trim())
				.filter(Boolean)
				.flatMap((line) => line.split(/(?<=\})(?=\{)/))
				.map((part) => JSON.parse(part) as { type: string; content?: string });
			const items = chunks.filter((chunk) => chunk.type === 'item');
			expect(items.length).toBeGreaterThan(1);
			const streamed = items.map((chunk) => chunk.content ?? '').join('');
			expect(streamed).toContain('Tool Generate_Video returned:');
			expect(streamed).toContain(taskId);
		},
		RUN_TIMEOUT,
	);

	it(
		"n8n's Basic LLM Chain (the version 2.41.1 adds) takes Gen Gateway Chat Model as its model: one chat completion with the prompt and the chosen model, the answer is the chain's output",
		async () => {
			if (!chain || !chainUrl) throw new Error('n8n 2.x only: the Basic LLM Chain workflow is imported on 2.x');
			const seen = await logCursor(mock);
			const prompt = `Name three colours of a sunrise over the sea ${randomId(6)}`;
			const response = await sendMessage(prompt, true, chainUrl);
			const answer = await response.text();
			expect({ status: response.status, answer }).toMatchObject({ status: 200 });

			// Exactly one request to the service: a chat completion for the chosen model whose only user message is the
			// prompt (the chain offers no tools).
			const log = await seen();
			expect(log.map((entry) => `${entry.method} ${entry.path}`)).toEqual(['POST /v1/chat/completions']);
			const [call] = chatCalls(log);
			expect(call).toMatchObject({ authorized: true, status: 200 });
			const body = call.body as { model: string; tools?: unknown; messages: Array<{ role: string; content: unknown }> };
			expect(body.model).toBe(CHAIN_MODEL);
			expect(body.tools).toBeUndefined();
			expect(body.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([prompt]);

			// The mock's answer (its echo of the prompt) is the chain's output text, in the chat and in the execution.
			expect(JSON.parse(answer)).toEqual({ text: `Echo: ${prompt}` });
			const executions = await server.rest('GET', `/rest/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId: chain.id }))}`, { cookie });
			const [latest] = executions.body.data.results as Array<{ id: string; status: string }>;
			expect(latest.status).toBe('success');
			const execution = await server.rest('GET', `/rest/executions/${latest.id}`, { cookie });
			const runData = unflatten(execution.body.data.data).resultData.runData;
			expect(runData['Basic LLM Chain'][0].data.main[0].map((item: { json: unknown }) => item.json)).toEqual([{ text: `Echo: ${prompt}` }]);
			// The model turn ran through the sub-node (n8n records the supplied model's call under it).
			expect(runData[MODEL_NODE]).toHaveLength(1);
		},
		RUN_TIMEOUT,
	);

	it(
		'an argument outside the model\'s range: nothing is sent; n8n 2.x hands the model the error, 1.x stops the run (n8n1-smoke)',
		async () => {
			const seen = await logCursor(mock);
			const response = await sendMessage('A very long fox video [[tool=Generate_Video]] [[arg.duration=99]]');
			const answer = await response.text();
			const log = await seen();
			expect(submissionsIn(log)).toEqual([]);
			const calls = chatCalls(log);
			if (e2eMajor() === 1) {
				// n8n 1.123.81's agent fails the execution on a tool's error: the chat gets an error, the model no second turn.
				expect({ status: response.status, answer }).toMatchObject({ status: 500 });
				expect(calls).toHaveLength(1);
				return;
			}
			expect({ status: response.status, answer }).toMatchObject({ status: 200 });
			expect(calls).toHaveLength(2);
			const messages = (calls[1].body as { messages: Array<{ role: string; content: string }> }).messages;
			const toolMessage = messages[messages.length - 1];
			expect(toolMessage.role).toBe('tool');
			expect(toolMessage.content).toMatch(/Invalid video request: duration/);
			expect((JSON.parse(answer) as { output: string }).output).toMatch(/Invalid video request: duration/);
		},
		RUN_TIMEOUT,
	);

	it(
		'the package loads with all five node types; on n8n 1.x the Chat Model is listed and its run says it needs n8n 2.x, nothing sent (n8n1-smoke)',
		async () => {
			const types = await server.rest('GET', '/types/nodes.json', { cookie });
			const ours = (types.body as Array<{ name: string; outputs?: unknown }>).filter((type) => type.name.startsWith(`${PACKAGE_NAME}.`));
			const names = new Set(ours.map((type) => type.name));
			for (const name of ['genGatewayModels', 'genGatewayVideo', 'genGatewayChat', 'genGatewayImage', 'genGatewayChatModel']) {
				expect(names).toContain(nodeType(name));
			}
			expect(ours.find((type) => type.name === nodeType('genGatewayChatModel'))?.outputs).toEqual(['ai_languageModel']);
			if (e2eMajor() === 2) {
				// On 2.x the sub-node is what ran the chat above (its model's two turns reached the mock).
				expect(workflow.nodes.find((node) => node.name === MODEL_NODE)?.type).toBe(nodeType('genGatewayChatModel'));
				return;
			}
			const seen = await logCursor(mock);
			const response = await sendMessage('Make a video [[tool=Generate_Video]]', true, subNodeOn1Url);
			expect(response.status).not.toBe(200);
			expect(chatCalls(await seen())).toEqual([]);
			expect(submissionsIn(await seen())).toEqual([]);
			const executions = await server.rest('GET', `/rest/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId: subNodeOn1!.id }))}`, { cookie });
			const [latest] = executions.body.data.results as Array<{ id: string; status: string }>;
			expect(latest.status).toBe('error');
			const execution = await server.rest('GET', `/rest/executions/${latest.id}`, { cookie });
			expect(JSON.stringify(unflatten(execution.body.data.data).resultData.error)).toMatch(NEEDS_N8N_2);
		},
		RUN_TIMEOUT,
	);

	it(
		'two identical tool calls in one model answer ("two videos of a lighthouse"): two submissions, two tasks, both results reach the model (n8n1-smoke)',
		async () => {
			// Issue 51, defect 3: the two calls shared one slot (agent + arguments): 1 POST, and the other call a false
			// "unknown outcome". n8n 2.x's agent hands the calls to the engine (a node run each); 1.x runs them inside.
			const seen = await logCursor(mock);
			const text = 'A lighthouse at dusk, waves below';
			const response = await sendMessage(`${text} [[tool=Generate_Video]] [[calls=2]] [[arg.duration=6]]`);
			const answer = await response.text();
			expect({ status: response.status, answer }).toMatchObject({ status: 200 });
			const log = await seen();
			const submissions = submissionsIn(log);
			expect(submissions).toHaveLength(2);
			expect(submissions[0].body).toEqual(submissions[1].body);
			expect(new Set(submissions.map((s) => s.taskId)).size).toBe(2);
			const calls = chatCalls(log);
			expect(calls).toHaveLength(2);
			const messages = (calls[1].body as { messages: Array<{ role: string; content: string }> }).messages;
			const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
			expect(results).toHaveLength(2);
			for (const submission of submissions) expect(results.some((r) => r.includes(submission.taskId!))).toBe(true);
			expect(answer).not.toMatch(/Not resubmitted|unknown outcome/);
		},
		RUN_TIMEOUT,
	);

	it('runs on the line the suite was asked for (n8n1-smoke)', () => {
		expect(home.install.major).toBe(e2eMajor());
	});

	it("never writes the API key to n8n's output, logs or any file of the n8n home (n8n1-smoke)", () => {
		expect(home.logs()).toContain('Generate Video');
		expect(home.findSecret(apiKey)).toEqual([]);
	});
});
