// The Video node inside a real n8n (1.123.81): validation before anything is paid for, FAILURE with and without
// "Continue On Fail", and n8n's own "Retry On Fail" against a mock (a separate process, so fault rules set here hold
// across the whole `n8n execute` run) that cuts a submission or fails an artifact listing once.
import { buildVideoRequest } from '../../nodes/GenGatewayVideo/model/requestBody';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { importWorkflows } from './workflows/imports';
import { expectFailed, expectSucceeded, logCursor, RUN_TIMEOUT, SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import { linearWorkflow, rowsNodes, videoNode, type NodeSettings } from './workflows/oneNode';
import { createN8nHome, nodeItems, randomId, type CredentialImport, type N8nHome } from './n8n';

/** n8n's settings under test: three tries, one second apart. */
const RETRY: NodeSettings = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1000 };
const FAIL_REASON = 'unsafe content detected by the e2e suite';

/** How many times n8n started a node in a run (one per try: n8n logs it at debug level). */
function tries(stdout: string, nodeName: string): number {
	return stdout.split(`Running node "${nodeName}" started`).length - 1;
}

describe('Gen Gateway Video in a real n8n', () => {
	const apiKey = `sk-e2e-video-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let credential: CredentialImport;
	const ids: Record<string, string> = {};

	const workflows = (ref: CredentialImport): Record<string, Record<string, unknown>> => ({
		// Two rows, the model from an expression (as from a sheet): the first valid, the second asks gk_1.5 for a last
		// frame, which the matrix does not allow it.
		forbidden: linearWorkflow('Video: forbidden field', [
			...rowsNodes([
				{ prompt: 'A valid row', model: 'sd_2.0_fast_special', last: '' },
				{ prompt: 'An invalid row', model: 'gk_1.5', last: 'https://example.com/last.png' },
			]),
			videoNode('Generate', ref, {
				operation: 'generate',
				model: '={{ $json.model }}',
				prompt: '={{ $json.prompt }}',
				duration: 5,
				lastImage: '={{ $json.last }}',
			}),
		]),
		// The first node continues on fail (its error item goes on), the second stops the workflow.
		failure: linearWorkflow('Video: FAILURE', [
			videoNode(
				'Generate (continue)',
				ref,
				{ operation: 'generate', model: 'gk_1.5', prompt: `A storm [[fail=${FAIL_REASON}]] [[instant]]`, options: { pollInterval: 1 } },
				{ onError: 'continueRegularOutput' },
			),
			videoNode('Generate (stop)', ref, {
				operation: 'generate',
				model: 'gk_1.5',
				prompt: `Another storm [[fail=${FAIL_REASON}]] [[instant]]`,
				options: { pollInterval: 1 },
			}),
		]),
		cutSubmission: linearWorkflow('Video: cut submission, Retry On Fail', [
			videoNode(
				'Generate',
				ref,
				{ operation: 'generate', model: 'gk_1.5', prompt: 'A cut submission [[instant]]', options: { pollInterval: 1 } },
				RETRY,
			),
		]),
		resume: linearWorkflow('Video: listing fails once, Retry On Fail', [
			videoNode(
				'Generate',
				ref,
				{ operation: 'generate', model: 'gk_1.5', prompt: 'A resumed task [[instant]]', options: { pollInterval: 1 } },
				RETRY,
			),
		]),
	});

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true });
		credential = { id: randomId(), name: 'Gen Gateway (video e2e)', type: 'genGatewayApi', data: { baseUrl: mock.url, apiKey } };
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
		'a field the matrix forbids for the model fails the run before anything is sent',
		async () => {
			const seen = await logCursor(mock);
			const run = await home.execute(ids.forbidden);

			const error = expectFailed(run);
			expect(error.message).toMatch(/^Invalid video request: lastImage: .*last frame.*\(model gk_1\.5\)$/);
			expect(error.description).toMatch(/Nothing was sent/);
			// Not even the first row, valid on its own, was submitted; nothing at all reached the service.
			expect(() => buildVideoRequest('sd_2.0_fast_special', { prompt: 'A valid row', duration: 5 })).not.toThrow();
			const log = await seen();
			expect(log.filter((entry) => entry.path.startsWith('/v1/'))).toEqual([]);
			expect(await mock.submissions()).toBe(0);
			expect(nodeItems(run.json, 'One Item per Row')).toHaveLength(2);
		},
		RUN_TIMEOUT,
	);

	it(
		'a task that ends in FAILURE fails with its fail_reason; with Continue On Fail the error item carries it',
		async () => {
			const seen = await logCursor(mock);
			const run = await home.execute(ids.failure);

			// The continuing node: one error item with the task's details, and the run went on to the next node.
			const [item] = nodeItems(run.json, 'Generate (continue)');
			expect(item.json).toMatchObject({
				error: expect.stringContaining(FAIL_REASON),
				fail_reason: FAIL_REASON,
				status: 'FAILURE',
				model: 'gk_1.5',
				task_id: expect.stringMatching(/^task_/),
			});
			expect(item.binary).toBeUndefined();

			// The stopping node: the run fails with the reason and the task.
			const error = expectFailed(run);
			const submissions = submissionsIn(await seen());
			expect(submissions).toHaveLength(2);
			const stoppedTask = submissions[1].taskId!;
			expect(stoppedTask).not.toBe(item.json.task_id);
			expect(error.message).toBe(`Video task ${stoppedTask} failed: ${FAIL_REASON}`);
			expect(error.node).toMatchObject({ name: 'Generate (stop)' });
		},
		RUN_TIMEOUT,
	);

	it(
		'Retry On Fail after a submission whose connection was cut: n8n tries three times, one task at the service',
		async () => {
			// The service takes the task, then the connection breaks before the answer: the outcome is unknown.
			await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'cut-after-accept' }]);
			const seen = await logCursor(mock);
			const run = await home.execute(ids.cutSubmission);

			const error = expectFailed(run);
			expect(tries(run.stdout, 'Generate')).toBe(3);
			expect(error.message).toMatch(/^Not resubmitted: an earlier try of this item in this execution had an unknown outcome/);
			const submissions = submissionsIn(await seen());
			expect(submissions.map((entry) => entry.outcome)).toEqual(['accepted-then-cut']);
			expect(await mock.submissions()).toBe(1);
		},
		RUN_TIMEOUT,
	);

	it(
		'Retry On Fail after a failure behind an accepted task: the retry resumes that task, nothing is paid twice',
		async () => {
			// The task is accepted and succeeds, but listing its artifacts fails once (500 is not retried inside the
			// node): the first try fails; the retry remembers the task_id in the n8n process and resumes it.
			await mock.setFaults([{ method: 'GET', path: '^/v1/tasks/[^/]+/artifacts$', kind: 'status', status: 500 }]);
			const seen = await logCursor(mock);
			const run = await home.execute(ids.resume);

			expectSucceeded(run);
			expect(tries(run.stdout, 'Generate')).toBe(2);
			const log = await seen();
			const submissions = submissionsIn(log);
			expect(submissions).toHaveLength(1);
			const [item] = nodeItems(run.json, 'Generate');
			const taskId = submissions[0].taskId!;
			expect(item.json).toMatchObject({ task_id: taskId, status: 'SUCCESS', resumed: true });
			expect(log.filter((entry) => entry.outcome === 'fault:status').map((entry) => entry.path)).toEqual([
				`/v1/tasks/${taskId}/artifacts`,
			]);
			const bytes = await home.binaryFile(item.binary.data.id);
			expect(item.binary.data.mimeType).toBe('video/mp4');
			expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));
		},
		RUN_TIMEOUT,
	);

	it("never writes the API key to n8n's output, logs or any file of the n8n home", () => {
		expect(home.logs()).toContain('Running node "Generate" started');
		expect(home.findSecret(apiKey)).toEqual([]);
	});
});
