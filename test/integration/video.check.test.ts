/**
 * The durable wait's Check operation: one status check per item, routed to Done (the video, at once) or Still Running
 * (back to n8n's Wait node); FAILURE and an exhausted Max Wait (counted from submitted_at) fail the item at once.
 */
import type { INode } from 'n8n-workflow';
import { NodeHelpers, Workflow } from 'n8n-workflow';

import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';
import { HarnessNodeTypes } from '../harness/node-types';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { startFakeVideoService, VIDEO_BYTES } from '../support/fakeVideoService';
import { generateParams as generate } from '../support/faultTable';
import { requestLines, runVideo, sha256 } from '../support/videoRun';

const CHECK = { operation: 'check' };
/** runVideo needs only the address and key of the service. */
const at = (server: { url: string }) => ({ url: server.url, apiKey: 'k-123456' }) as unknown as MockClient;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('Video Check: outputs', () => {
	const video = new GenGatewayVideo();
	const TYPE = 'n8n-nodes-gen-gateway.genGatewayVideo';
	function outputsFor(operation: string) {
		const node: INode = { id: 'v', name: 'Video', type: TYPE, typeVersion: 1, position: [0, 0], parameters: { operation } };
		const workflow = new Workflow({
			nodes: [node],
			connections: {},
			active: false,
			nodeTypes: new HarnessNodeTypes([{ type: TYPE, nodeType: video }]),
		});
		return NodeHelpers.getNodeOutputs(workflow, node, video.description);
	}

	it('Check has two outputs, Done and Still Running; every other operation has one', () => {
		expect(outputsFor('check')).toEqual([
			{ type: 'main', displayName: 'Done' },
			{ type: 'main', displayName: 'Still Running' },
		]);
		for (const operation of ['generate', 'getStatus', 'waitForCompletion', 'listArtifacts', 'download']) {
			expect(outputsFor(operation)).toEqual(['main']);
		}
	});
});

describe('Video Check against a service of the test', () => {
	it('SUCCESS: Done at once with the video streamed into binary data; one status check, nothing on Still Running', async () => {
		const server = await startFakeVideoService({ taskId: 'task_ok', status: () => ({ task_id: 'task_ok', status: 'SUCCESS', progress: '100%' }) });
		try {
			const submittedAt = ago(90_000);
			const result = await runVideo(at(server), CHECK, {
				input: [{ task_id: 'task_ok', submitted_at: submittedAt, model: 'm1', status: 'IN_PROGRESS', checks: 2 }],
			});
			try {
				expect(result.error).toBeUndefined();
				const [done, running] = result.outputs('Video');
				expect(running).toEqual([]);
				expect(done).toHaveLength(1);
				expect(done[0].json).toMatchObject({ task_id: 'task_ok', submitted_at: submittedAt, model: 'm1', status: 'SUCCESS', checks: 3 });
				expect(done[0].json.waited_seconds as number).toBeGreaterThanOrEqual(90);
				expect(done[0].pairedItem).toEqual({ item: 0 });
				expect(await result.readBinary(done[0])).toEqual(VIDEO_BYTES);
				expect(server.polls()).toBe(1);
				expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
					'GET /v1/tasks/task_ok',
					'GET /v1/tasks/task_ok/artifacts',
					'GET /v1/tasks/task_ok/artifacts/video/content',
				]);
			} finally {
				await result.cleanup();
			}
		} finally {
			await server.close();
		}
	});

	it('IN_PROGRESS: Still Running at once with the last status and progress, the item otherwise kept', async () => {
		const server = await startFakeVideoService({ taskId: 'task_run', status: () => ({ task_id: 'task_run', status: 'in_progress', progress: '42%' }) });
		try {
			const submittedAt = ago(5_000);
			const started = Date.now();
			const result = await runVideo(at(server), CHECK, {
				input: [{ task_id: 'task_run', submitted_at: submittedAt, model: 'm1', note: 'mine', status: 'SUBMITTED' }],
			});
			expect(result.error).toBeUndefined();
			const [done, running] = result.outputs('Video');
			expect(done).toEqual([]);
			expect(running).toHaveLength(1);
			expect(running[0].json).toMatchObject({
				task_id: 'task_run',
				submitted_at: submittedAt,
				model: 'm1',
				note: 'mine',
				status: 'IN_PROGRESS',
				progress: '42%',
				checks: 1,
			});
			expect(running[0].binary).toBeUndefined();
			expect(running[0].pairedItem).toEqual({ item: 0 });
			// One check, no in-process polling: the waiting is the Wait node's.
			expect(server.polls()).toBe(1);
			expect(Date.now() - started).toBeLessThan(3000);
		} finally {
			await server.close();
		}
	});

	it.each([
		['NOT_START', '0%'],
		['SUBMITTED', '10%'],
		['QUEUED', '20%'],
		['UNKNOWN', '30%'],
		['PAUSED', '55%'],
	])('%s (new-api\'s running statuses, and one nobody lists) goes to Still Running with the service\'s progress', async (status, progress) => {
		const body = { task_id: 'task_run', platform: 'vendor', status, progress, fail_reason: '', created_at: 1, finished_at: 0 };
		const server = await startFakeVideoService({ taskId: 'task_run', status: () => body });
		try {
			const result = await runVideo(at(server), CHECK, { input: [{ task_id: 'task_run', submitted_at: ago(5_000) }] });
			expect(result.error).toBeUndefined();
			const [done, running] = result.outputs('Video');
			expect(done).toEqual([]);
			expect(running.map((item) => item.json)).toMatchObject([{ task_id: 'task_run', status, progress, checks: 1 }]);
			expect(server.polls()).toBe(1);
		} finally {
			await server.close();
		}
	});

	it('FAILURE: the item fails at once with fail_reason (an error item on Done under Continue On Fail)', async () => {
		const server = await startFakeVideoService({
			taskId: 'task_bad',
			status: () => ({ task_id: 'task_bad', status: 'FAILURE', fail_reason: 'content policy: prompt rejected' }),
		});
		try {
			const input = [{ task_id: 'task_bad', submitted_at: ago(70_000) }];
			const failed = await runVideo(at(server), CHECK, { input });
			expect(failed.nodeError('Video')!.message).toBe('Video task task_bad failed: content policy: prompt rejected');
			expect(server.polls()).toBe(1);

			const continued = await runVideo(at(server), CHECK, { input, continueOnFail: true });
			const [done, running] = continued.outputs('Video');
			expect(running).toEqual([]);
			expect(done).toHaveLength(1);
			expect(done[0].json).toMatchObject({
				error: 'Video task task_bad failed: content policy: prompt rejected',
				task_id: 'task_bad',
				status: 'FAILURE',
				fail_reason: 'content policy: prompt rejected',
			});
			expect(done[0].pairedItem).toEqual({ item: 0 });
			// Never a content request for a failed task.
			expect(server.requests.filter((r) => r.path.includes('/artifacts'))).toEqual([]);
		} finally {
			await server.close();
		}
	});

	it('Max Wait is counted from submitted_at: a task still running past it fails instead of going round again', async () => {
		const server = await startFakeVideoService({ taskId: 'task_slow', status: () => ({ task_id: 'task_slow', status: 'QUEUED' }) });
		try {
			// Default Max Wait: 30 minutes from the submission, whatever the number of checks so far.
			const late = await runVideo(at(server), CHECK, {
				input: [{ task_id: 'task_slow', submitted_at: ago(31 * 60_000), checks: 29 }],
			});
			const error = late.nodeError('Video')!;
			expect(error.message).toBe('Video task task_slow did not finish within 30 minute(s) (last status QUEUED)');
			expect((error as { description?: string }).description).toMatch(/not resubmitted.*Task ID task_slow/);

			// A shorter Max Wait (3 s) against a task submitted 10 s ago; one submitted just now still goes round.
			const short = await runVideo(at(server), { ...CHECK, options: { maxWait: 0.05 } }, {
				input: [
					{ task_id: 'task_slow', submitted_at: ago(10_000) },
					{ task_id: 'task_slow', submitted_at: ago(0) },
				],
				continueOnFail: true,
			});
			const [done, running] = short.outputs('Video');
			expect(done.map((item) => [item.json.error, item.pairedItem])).toEqual([
				['Video task task_slow did not finish within 0.05 minute(s) (last status QUEUED)', { item: 0 }],
			]);
			expect(running.map((item) => [item.json.status, item.pairedItem])).toEqual([['QUEUED', { item: 1 }]]);
		} finally {
			await server.close();
		}
	});

	it('an empty Submitted At counts Max Wait from the first check of the task in this execution', async () => {
		const server = await startFakeVideoService({ taskId: 'task_new', status: () => ({ task_id: 'task_new', status: 'QUEUED' }) });
		try {
			const before = Date.now();
			const result = await runVideo(at(server), { ...CHECK, submittedAt: '', options: { maxWait: 0.05 } }, {
				input: [{ task_id: 'task_new', submitted_at: ago(60 * 60_000) }],
			});
			expect(result.error).toBeUndefined();
			const [done, running] = result.outputs('Video');
			expect(done).toEqual([]);
			expect(running).toHaveLength(1);
			expect(Date.parse(running[0].json.submitted_at as string)).toBeGreaterThanOrEqual(before - 1000);
		} finally {
			await server.close();
		}
	});

	it('a Submitted At that is not a date fails the item before any request', async () => {
		const server = await startFakeVideoService({ taskId: 'task_x', status: () => ({ task_id: 'task_x', status: 'QUEUED' }) });
		try {
			const result = await runVideo(at(server), CHECK, {
				input: [{ task_id: 'task_x', submitted_at: 'yesterday-ish' }],
			});
			expect(result.nodeError('Video')!.message).toMatch(/^Submitted At: "yesterday-ish" is not a date/);
			expect(server.requests).toEqual([]);
		} finally {
			await server.close();
		}
	});
});

describe('Video Check against the mock', () => {
	let mock: MockClient;
	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey: 'sentinel-key-check-5a4b3c' });
	});
	afterAll(async () => await mock?.stop());
	beforeEach(async () => await mock.reset());

	it("Generate without waiting, then Check: items split across Done and Still Running in input order with pairedItem", async () => {
		const submitted = await runVideo(
			mock,
			generate('unused', { prompt: '={{ $json.prompt }}', waitForCompletion: false }),
			{ input: [{ prompt: 'fox one [[instant]]' }, { prompt: 'fox two [[runMs=600000]]' }, { prompt: 'fox three [[instant]]' }] },
		);
		const tasks = submitted.output('Video');
		expect(tasks.map((item) => item.json.status)).toEqual(['SUBMITTED', 'SUBMITTED', 'SUBMITTED']);
		expect(tasks.every((item) => typeof item.json.submitted_at === 'string')).toBe(true);

		// Check's Task ID and Submitted At default to {{ $json.task_id }} and {{ $json.submitted_at }}.
		const checked = await runVideo(mock, CHECK, { input: tasks.map((item) => item.json) });
		try {
			expect(checked.error).toBeUndefined();
			const [done, running] = checked.outputs('Video');
			expect(done.map((item) => [item.json.task_id, item.json.status, item.pairedItem])).toEqual([
				[tasks[0].json.task_id, 'SUCCESS', { item: 0 }],
				[tasks[2].json.task_id, 'SUCCESS', { item: 2 }],
			]);
			for (const item of done) {
				expect(sha256(await checked.readBinary(item))).toBe(await mock.artifactSha256(item.json.task_id as string));
			}
			expect(running).toHaveLength(1);
			expect(running[0].json).toMatchObject({ task_id: tasks[1].json.task_id, submitted_at: tasks[1].json.submitted_at, checks: 1 });
			expect(['QUEUED', 'IN_PROGRESS']).toContain(running[0].json.status);
			expect(running[0].pairedItem).toEqual({ item: 1 });

			const lines = await requestLines(mock);
			expect(lines.filter((line) => line === 'POST /v1/tasks/vendor')).toHaveLength(3);
			expect(lines.filter((line) => line === `GET /v1/tasks/${tasks[1].json.task_id}`)).toHaveLength(1);
		} finally {
			await checked.cleanup();
		}
	});

	it('a video whose temporary URL expired before the check: an error that says so, with the task and what to do', async () => {
		const submitted = await runVideo(mock, generate('a fox [[instant]] [[ttlMs=200]]', { waitForCompletion: false }));
		const [task] = submitted.output('Video');
		await new Promise((resolve) => setTimeout(resolve, 600));
		const checked = await runVideo(mock, CHECK, { input: [task.json], continueOnFail: true });
		const [done, running] = checked.outputs('Video');
		expect(running).toEqual([]);
		expect(done[0].json).toMatchObject({ task_id: task.json.task_id, status: 'SUCCESS' });
		expect(done[0].json.error).toMatch(new RegExp(`^Could not download artifact "video" of task ${task.json.task_id}: .*410.*expired`));
		expect(done[0].json.errorDescription).toMatch(/Try "Download" with this Task ID/);
		expect((await requestLines(mock)).filter((line) => line === 'POST /v1/tasks/vendor')).toHaveLength(1);
	});

	it('a task that finishes between two checks: Still Running, then Done with the exact mp4', async () => {
		const submitted = await runVideo(mock, generate('a fox [[queuedMs=0]] [[runMs=1500]]', { waitForCompletion: false }));
		const [task] = submitted.output('Video');
		const first = await runVideo(mock, CHECK, { input: [task.json] });
		const [, running] = first.outputs('Video');
		expect(running).toHaveLength(1);
		await new Promise((resolve) => setTimeout(resolve, 2500));
		const second = await runVideo(mock, CHECK, { input: [running[0].json] });
		try {
			const [done, stillRunning] = second.outputs('Video');
			expect(stillRunning).toEqual([]);
			expect(done[0].json).toMatchObject({ task_id: task.json.task_id, status: 'SUCCESS', checks: 2, model: 'sd_2.0_fast_discount' });
			expect(done[0].binary!.data).toMatchObject({ mimeType: 'video/mp4', fileName: `${task.json.task_id}.mp4` });
			expect(sha256(await second.readBinary(done[0]))).toBe(await mock.artifactSha256(task.json.task_id as string));
			expect((await requestLines(mock)).filter((line) => line === 'POST /v1/tasks/vendor')).toHaveLength(1);
		} finally {
			await second.cleanup();
		}
	});
});
