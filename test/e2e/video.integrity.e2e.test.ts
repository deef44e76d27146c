// Issue 12 in a real n8n (2.41.1 by default, 1.123.81 with GEN_GATEWAY_E2E_N8N=1), the package installed as n8n
// installs it: paid work is never lost (a failing item names every task the run paid for), never paid twice (a 500
// answer to a submission and n8n's Retry On Fail; a loop's next batch is a new submission, not a replay), and only
// what the user set is sent (the model from an expression).
import { spawnMockProcess, type MockClient } from '../mock/process';
import { importWorkflows } from './workflows/imports';
import { expectFailed, expectSucceeded, logCursor, RUN_TIMEOUT, SETUP_TIMEOUT, submissionsIn } from './workflows/runs';
import { linearWorkflow, rowsNodes, videoNode, type NodeSettings } from './workflows/oneNode';
import { createN8nHome, nodeItems, randomId, type CredentialImport, type N8nHome } from './n8n';

const RETRY: NodeSettings = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1000 };
const FAIL_REASON = 'the cat was not allowed';

/** Rows → Loop Over Items (batch size 1) → Generate → back to the loop; Done when the rows run out. */
function loopWorkflow(ref: CredentialImport, rows: Array<Record<string, unknown>>): Record<string, unknown> {
	const base = linearWorkflow('Video: identical rows in a loop', rowsNodes(rows));
	const nodes = base.nodes as Array<Record<string, unknown>>;
	const generate = videoNode('Generate', ref, {
		operation: 'generate',
		model: 'gk_1.5',
		prompt: '={{ $json.prompt }}',
		options: { pollInterval: 1 },
	});
	nodes.push(
		{ id: `${randomId(8)}-loop`, name: 'Loop', type: 'n8n-nodes-base.splitInBatches', typeVersion: 3, position: [700, 0], parameters: { batchSize: 1, options: {} } },
		{ id: `${randomId(8)}-gen`, typeVersion: 1, position: [900, 100], parameters: {}, ...generate },
		{ id: `${randomId(8)}-done`, name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [900, -100], parameters: {} },
	);
	const connections = base.connections as Record<string, unknown>;
	connections['One Item per Row'] = { main: [[{ node: 'Loop', type: 'main', index: 0 }]] };
	// splitInBatches v3: output 0 is "done", output 1 is "loop".
	connections.Loop = { main: [[{ node: 'Done', type: 'main', index: 0 }], [{ node: 'Generate', type: 'main', index: 0 }]] };
	connections.Generate = { main: [[{ node: 'Loop', type: 'main', index: 0 }]] };
	return base;
}

describe('Gen Gateway Video in a real n8n: paid work is kept, paid once, and only what is set is sent', () => {
	const apiKey = `sk-e2e-integrity-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let credential: CredentialImport;
	const ids: Record<string, string> = {};

	const workflows = (ref: CredentialImport): Record<string, Record<string, unknown>> => ({
		failingItem: linearWorkflow('Video: one of three rows fails', [
			...rowsNodes([
				{ prompt: 'a fox [[runMs=1500]]' },
				{ prompt: `a cat [[fail=${FAIL_REASON}]] [[runMs=300]]` },
				{ prompt: 'a dog [[runMs=1500]]' },
			]),
			videoNode('Generate', ref, {
				operation: 'generate',
				model: 'gk_1.5',
				prompt: '={{ $json.prompt }}',
				options: { pollInterval: 1 },
			}),
		]),
		answered500: linearWorkflow('Video: submission answered 500, Retry On Fail', [
			videoNode('Generate', ref, { operation: 'generate', model: 'gk_1.5', prompt: 'A 500 [[instant]]', options: { pollInterval: 1 } }, RETRY),
		]),
		loop: loopWorkflow(ref, [{ prompt: 'the same row [[instant]]' }, { prompt: 'the same row [[instant]]' }]),
		modelFromExpression: linearWorkflow('Video: model from an expression, nothing else set', [
			...rowsNodes([
				{ prompt: 'an sd row [[instant]]', model: 'sd_2.0_fast_special' },
				{ prompt: 'a gk row [[instant]]', model: 'gk_video' },
				{ prompt: 'an sdx row [[instant]]', model: 'sdx_2.0_nsfw_c1' },
			]),
			videoNode('Generate', ref, {
				operation: 'generate',
				model: '={{ $json.model }}',
				prompt: '={{ $json.prompt }}',
				options: { pollInterval: 1 },
			}),
		]),
	});

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true });
		credential = { id: randomId(), name: 'Gen Gateway (integrity e2e)', type: 'genGatewayApi', data: { baseUrl: mock.url, apiKey } };
		await home.importCredential(credential);
		const all = workflows(credential);
		const imported = await importWorkflows(home, Object.values(all));
		Object.keys(all).forEach((key, index) => (ids[key] = imported[index]));
	}, SETUP_TIMEOUT);

	beforeEach(async () => {
		await mock.reset();
	});

	afterAll(async () => {
		await mock?.stop();
		await home?.dispose();
	});

	it(
		'a failing item (no Continue On Fail): the run fails and its error names every task the run paid for',
		async () => {
			const seen = await logCursor(mock);
			const run = await home.execute(ids.failingItem);
			const error = expectFailed(run);
			const submitted = submissionsIn(await seen()).map((entry) => entry.taskId!);
			expect(submitted.length).toBeGreaterThanOrEqual(2);
			// What n8n keeps and shows of the error: every paid task_id is there, with how to collect it.
			const shown = `${error.message}\n${error.description ?? ''}\n${JSON.stringify(error.context ?? {})}`;
			for (const taskId of submitted) expect(shown).toContain(taskId);
			expect(shown).toContain(FAIL_REASON);
			expect(shown).toMatch(/Wait for Completion|Download/);
		},
		RUN_TIMEOUT,
	);

	it(
		'a submission answered 500 is an unknown outcome: Retry On Fail tries three times, one POST reaches the service',
		async () => {
			await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'status', status: 500 }]);
			const seen = await logCursor(mock);
			const run = await home.execute(ids.answered500);
			const error = expectFailed(run);
			expect(run.stdout.split('Running node "Generate" started').length - 1).toBe(3);
			expect(`${error.message} ${error.description ?? ''}`).toMatch(/unknown|Not resubmitted/i);
			expect(submissionsIn(await seen())).toHaveLength(1);
		},
		RUN_TIMEOUT,
	);

	it(
		"inside Loop Over Items, an identical row in the next batch is a new submission (n8n's run index), not a replay",
		async () => {
			const seen = await logCursor(mock);
			const run = await home.execute(ids.loop);
			expectSucceeded(run);
			const submitted = submissionsIn(await seen()).map((entry) => entry.taskId);
			expect(submitted).toHaveLength(2);
			expect(new Set(submitted).size).toBe(2);
			const results = [0, 1].map((runIndex) => nodeItems(run.json, 'Generate', 0, runIndex)[0].json.task_id);
			expect(results.sort()).toEqual([...submitted].sort());
		},
		RUN_TIMEOUT,
	);

	it(
		'the model from an expression and nothing else set: each body holds the prompt, the model and only required values',
		async () => {
			const seen = await logCursor(mock);
			const run = await home.execute(ids.modelFromExpression);
			expectSucceeded(run);
			const bodies = Object.fromEntries(
				submissionsIn(await seen()).map((entry) => [(entry.body as { model: string }).model, entry.body]),
			);
			// SD models require a duration: the model's own default from the matrix (5), and nothing else.
			expect(bodies['sd_2.0_fast_special']).toEqual({ model: 'sd_2.0_fast_special', prompt: 'an sd row [[instant]]', duration: 5 });
			expect(bodies.gk_video).toEqual({ model: 'gk_video', prompt: 'a gk row [[instant]]' });
			expect(bodies['sdx_2.0_nsfw_c1']).toEqual({ model: 'sdx_2.0_nsfw_c1', prompt: 'an sdx row [[instant]]', duration: 5 });
		},
		RUN_TIMEOUT,
	);
});
