// Time: about 10 s (2 properties, 40 cases each, on n8n-core's engine against a loopback server).
/**
 * Issue 51, "every call asked is a call sent, once", as properties: two calls asked are two requests, whatever they
 * say, and the same call retried is the same request (an unknown outcome is never sent again, an accepted one reused).
 *
 * Agent steps: generated steps of tool calls (1-3 steps of 1-3 calls, their arguments from two subjects, so that
 * identical calls in one step and across steps are common), run as LangChain runs them (one step's calls at once) on
 * the tool-inside-the-agent path (n8n-core's createNodeAsTool) or the engine-request path (n8n 2.x's Agent V3); the
 * tool's Retry On Fail, the agent's Retry On Fail (it fails when a call failed, and asks the same steps again), and
 * which POSTs the service answers 500 (an unknown outcome). Invariant: N calls asked, N POSTs, over all tries; on a run
 * that ends, exactly the calls answered 500 failed (no false "unknown outcome").
 *
 * Root nodes over rows: 1-5 rows of two texts, the model asked per row (a chain) or once (an agent), one row after the
 * other or all at once, Continue On Fail, the root's Retry On Fail, which POSTs are answered 500. Invariant: the first
 * try sends every row once; a retry sends, per text, only the calls of the first try that were answered (a call whose
 * outcome was unknown is never sent again).
 */
import fc from 'fast-check';

import { checkProperty, completion } from '../support/hostileServers';
import { rootOutput, runWithModel } from '../support/modelRoot';
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';
import { imageTool, runWithTool } from '../support/toolCaller';

const KEY = 'sentinel-key-properties-calls-9f8e';
const PNG_B64 =
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const RETRY = { retryOnFail: true, maxTries: 2, waitBetweenTries: 1 };

jest.setTimeout(120_000);

/** A loopback service whose POSTs numbered in `fails` (from 1, in arrival order) are answered 500, after `delays`. */
async function service(fails: number[], delays: number[], answer: (body: string) => object) {
	let n = 0;
	return await startScriptedServer((req, res) => {
		const i = ++n;
		setTimeout(() => {
			if (fails.includes(i)) sendJson(res, 500, { error: { message: 'internal' } });
			else sendJson(res, 200, answer(req.body));
		}, delays[i % delays.length] ?? 0);
	});
}

interface AgentCase {
	engine: boolean;
	steps: string[][];
	toolRetry: boolean;
	agentRetry: boolean;
	fails: number[];
	delays: number[];
}

const subject = fc.constantFrom('lighthouse', 'fox');
const agentCases: fc.Arbitrary<AgentCase> = fc
	.record({
		engine: fc.boolean(),
		steps: fc.array(fc.array(subject, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
		toolRetry: fc.boolean(),
		agentRetry: fc.boolean(),
		fails: fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { maxLength: 4 }),
		delays: fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 4 }),
	})
	// The engine-request caller asks one step and is not retried.
	.map((c) => (c.engine ? { ...c, steps: c.steps.slice(0, 1), agentRetry: false } : c));

it('agent steps: N tool calls asked, N requests, none twice (parallel and repeated identical calls, retries)', async () => {
	await checkProperty(
		agentCases,
		async (c) => {
			const server = await service(c.fails, c.delays, () => ({ created: 1, data: [{ b64_json: PNG_B64 }] }));
			try {
				const run = await runWithTool({
					tool: imageTool(),
					toolParameters: {
						operation: 'generate',
						model: { __rl: true, mode: 'id', value: 'img-1' },
						prompt: c.engine ? '=a picture of {{ $json.subject }}' : "=a picture of {{ $fromAI('subject') }}",
						toolDescription: 'make an image',
					},
					toolSettings: c.toolRetry ? RETRY : {},
					callerParameters: {
						steps: JSON.stringify(c.steps.map((step) => step.map((s) => ({ subject: s })))),
						failOnError: c.agentRetry,
					},
					callerSettings: c.agentRetry ? RETRY : {},
					engine: c.engine,
					credentials: { baseUrl: server.url, apiKey: KEY },
				});
				const asked = c.steps.flat().length;
				const posts = postsTo(server, '/v1/images/generations').length;
				expect({ asked, posts }).toEqual({ asked, posts: asked });
				const unknown = c.fails.filter((i) => i <= asked).length;
				const results = run.data.resultData.runData.Caller?.[0]?.data?.main?.[0]?.[0]?.json?.results as string[] | undefined;
				if (results) {
					const failed = results.filter((r) => /^ERROR|"error"/.test(r));
					expect({ failed: failed.length, results }).toEqual({ failed: unknown, results });
				} else {
					// Only the agent's retry fails the run, and only after a call failed.
					expect(c.agentRetry && unknown > 0).toBe(true);
				}
			} finally {
				await server.close();
			}
		},
		{ numRuns: 40, maxMs: 60_000 },
	);
});

interface RootCase {
	rows: string[];
	supply: 'perItem' | 'once';
	parallel: boolean;
	retry: boolean;
	fails: number[];
	delays: number[];
}

const rootCases: fc.Arbitrary<RootCase> = fc.record({
	rows: fc.array(fc.constantFrom('refund please', 'where is my order'), { minLength: 1, maxLength: 5 }),
	supply: fc.constantFrom('perItem' as const, 'once' as const),
	parallel: fc.boolean(),
	retry: fc.boolean(),
	fails: fc.uniqueArray(fc.integer({ min: 1, max: 10 }), { maxLength: 4 }),
	delays: fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 1, maxLength: 4 }),
});

interface Asked {
	row: number;
	text: string;
}
const askedOf = (body: string): Asked => {
	const messages = (JSON.parse(body) as { messages: Array<{ role: string; content: string }> }).messages;
	return { row: Number(/row (\d+)/.exec(messages[0].content)?.[1]), text: messages.at(-1)!.content };
};
const countBy = (texts: string[]) => texts.reduce<Record<string, number>>((n, t) => ({ ...n, [t]: (n[t] ?? 0) + 1 }), {});

it('roots over rows: every row asked is sent once; a retry never sends a call whose outcome was unknown', async () => {
	await checkProperty(
		rootCases,
		async (c) => {
			const server = await service(c.fails, c.delays, (body) => completion(`answer to ${askedOf(body).text}`));
			try {
				const run = await runWithModel({
					roots: [{
						name: 'Chain',
						// The row in the system message, which is not part of a call's identity: only to read the POSTs.
						parameters: { supply: c.supply, parallel: c.parallel, system: '=row {{ $itemIndex }}' },
						settings: { continueOnFail: true, ...(c.retry ? RETRY : {}) },
					}],
					input: c.rows.map((q) => ({ q })),
					credentials: { baseUrl: server.url, apiKey: KEY },
				});
				const posts = postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body));
				// A try's calls all end before the next try begins: the first rows.length POSTs are the first try's.
				const first = posts.slice(0, c.rows.length);
				const again = posts.slice(c.rows.length);
				expect(countBy(first.map((p) => p.text))).toEqual(countBy(c.rows));
				expect(new Set(first.map((p) => p.row)).size).toBe(c.rows.length);
				// n8n retries the root when its first output item is an error: row 0 answered 500.
				const unknownAt = (p: Asked) => c.fails.includes(posts.indexOf(p) + 1);
				const retried = c.retry && first.some((p) => p.row === 0 && unknownAt(p));
				const answered = first.filter((p) => !unknownAt(p)).map((p) => p.text);
				expect(countBy(again.map((p) => p.text))).toEqual(retried ? countBy(answered) : {});
				expect(rootOutput(run, 'Chain')).toHaveLength(c.rows.length);
			} finally {
				await server.close();
			}
		},
		{ numRuns: 40, maxMs: 60_000 },
	);
});
