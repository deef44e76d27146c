/**
 * List Artifacts and Download on a task that has not succeeded: new-api lists `[]` before SUCCESS (our mock answers
 * 409); either way the user learns plainly that the task is still running (or failed), with its status and progress.
 */
import type { MockClient } from '../mock/process';
import { startFakeVideoService } from '../support/fakeVideoService';
import type { FakeVideoOptions } from '../support/fakeVideoService';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import { runVideo } from '../support/videoRun';

type NodeErrorShape = Error & { description?: string; context?: Record<string, unknown> };
const at = (server: { url: string }) => ({ url: server.url, apiKey: 'k-123456' }) as unknown as MockClient;
const running = { task_id: 'task_r', platform: 'vendor', status: 'IN_PROGRESS', progress: '30%', fail_reason: '' };
const newApiEmpty = { task_id: 'task_r', artifacts: [] };
const notReady409: FakeVideoOptions['content'] = (_req, res) =>
	sendJson(res, 409, { error: { message: 'artifact not ready', type: 'artifact_not_ready', code: 'artifact_not_ready' } });

async function run(operation: string, options: Omit<FakeVideoOptions, 'taskId'>) {
	const server = await startFakeVideoService({ taskId: 'task_r', ...options });
	try {
		const result = await runVideo(at(server), { operation, taskId: 'task_r' });
		return { error: result.nodeError('Video') as NodeErrorShape | undefined, output: result.error ? [] : result.output(), requests: [...server.requests] };
	} finally {
		await server.close();
	}
}

describe('List Artifacts / Download on a task not yet succeeded', () => {
	it.each(['listArtifacts', 'download'])(
		"%s on a running task (new-api's empty list): says it is still running, with status and progress",
		async (operation) => {
			const { error, requests } = await run(operation, { status: () => running, artifacts: newApiEmpty, content: notReady409 });
			expect(error?.message).toBe('Video task task_r is still running (status IN_PROGRESS, 30%): it has no artifacts yet');
			expect(error?.description).toMatch(/use "Wait for Completion" \(or the durable wait's "Check"\) with Task ID task_r/);
			expect(error?.context).toMatchObject({ task_id: 'task_r', status: 'IN_PROGRESS', progress: '30%' });
			// Nothing paid, and Download does not hammer a content that cannot be there yet.
			expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
			expect(requests.filter((r) => r.path.endsWith('/content'))).toEqual([]);
		},
	);

	it('List Artifacts on a running task whose listing answers 409: the same plain answer, not the 409', async () => {
		const server = await startScriptedServer((req, res) => {
			if (req.path === '/v1/tasks/task_r') return sendJson(res, 200, { ...running, status: 'NOT_START', progress: '0%' });
			sendJson(res, 409, { error: { message: 'task not finished' } });
		});
		try {
			const result = await runVideo(at(server), { operation: 'listArtifacts', taskId: 'task_r' });
			expect(result.nodeError('Video')?.message).toMatch(/^Video task task_r is still running \(status NOT_START, 0%\)/);
		} finally {
			await server.close();
		}
	});

	it('List Artifacts on a failed task: says it failed, with the reason', async () => {
		const failed = { ...running, status: 'FAILURE', progress: '100%', fail_reason: 'content policy' };
		const { error } = await run('listArtifacts', { status: () => failed, artifacts: newApiEmpty });
		expect(error?.message).toBe('Video task task_r has no artifacts: it failed: content policy');
	});

	it('List Artifacts on a task that succeeded with an empty list: the empty list, no error', async () => {
		const { error, output } = await run('listArtifacts', { status: () => ({ ...running, status: 'SUCCESS' }), artifacts: newApiEmpty });
		expect(error).toBeUndefined();
		expect(output.map((item) => item.json)).toEqual([{ task_id: 'task_r', artifacts: [] }]);
	});
});
