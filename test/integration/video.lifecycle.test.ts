import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams as generate } from '../support/faultTable';
import { FAST, findSecret, requestLines, runVideo, sha256 } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-video-9f8e7d' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

describe('Video Generate against the mock, through n8n-core', () => {
	it('submits once, polls QUEUED → IN_PROGRESS → SUCCESS and streams the exact mp4 bytes into binary data', async () => {
		const result = await runVideo(mock, generate('a fox in snow [[queuedMs=300]] [[runMs=1500]]'));
		try {
			expect(result.error).toBeUndefined();
			const [item] = result.output();
			expect(item.json).toMatchObject({ status: 'SUCCESS', model: 'sd_2.0_fast_discount', resumed: false });
			const taskId = item.json.task_id as string;
			expect(taskId).toMatch(/^task_/);
			expect(item.json.polls as number).toBeGreaterThanOrEqual(2);
			expect(item.json.artifacts).toEqual([expect.objectContaining({ key: 'video', mime_type: 'video/mp4' })]);
			expect(item.json.request).toEqual({ model: 'sd_2.0_fast_discount', prompt: expect.any(String), duration: 5 });
			expect(item.pairedItem).toEqual({ item: 0 });
			expect(item.binary!.data).toMatchObject({ mimeType: 'video/mp4', fileName: `${taskId}.mp4` });
			const bytes = await result.readBinary(item);
			expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
			expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));

			const lines = await requestLines(mock);
			expect(lines.filter((l) => l === 'POST /v1/tasks/vendor')).toHaveLength(1);
			expect(lines[lines.length - 1]).toBe(`GET /v1/tasks/${taskId}/artifacts/video/content`);
			// The accepted task is in n8n's log before anything else can go wrong (a killed worker leaves only the log).
			expect(result.logs.some((line) => line.includes(`task ${taskId} accepted`))).toBe(true);
			// Progress is reported while IN_PROGRESS.
			expect(result.logs.some((line) => /IN_PROGRESS \d+%/.test(line))).toBe(true);
			expect(findSecret(mock.apiKey, result.run, result.logs)).toEqual([]);
		} finally {
			await result.cleanup();
		}
	});

	it('sends only what the user set: defaults the model does not need are not sent', async () => {
		const result = await runVideo(mock, {
			operation: 'generate',
			model: 'gk_video',
			prompt: 'minimal [[instant]]',
			waitForCompletion: false,
		});
		expect(result.error).toBeUndefined();
		const submission = (await mock.log()).find((e) => e.method === 'POST')!;
		expect(submission.body).toEqual({ model: 'gk_video', prompt: 'minimal [[instant]]' });
		expect(result.output()[0].json).toMatchObject({ status: 'SUBMITTED', task_id: expect.stringMatching(/^task_/) });
	});

	it('tolerates an artifact list given as a bare array or under "artifacts"', async () => {
		for (const shape of ['bare', 'artifacts']) {
			const result = await runVideo(mock, generate(`shape test [[instant]] [[shape=${shape}]]`));
			expect(result.error).toBeUndefined();
			expect(result.output()[0].binary?.data?.mimeType).toBe('video/mp4');
			await result.cleanup();
		}
	});

	it('stops at once on FAILURE with fail_reason and task_id, with no further poll', async () => {
		const result = await runVideo(mock, generate('[[fail=the prompt was blocked]] [[runMs=200]]'));
		const error = result.nodeError('Video')!;
		expect(error.message).toMatch(/^Video task task_\w+ failed: the prompt was blocked$/);
		const taskId = /task_\w+/.exec(error.message)![0];
		const lines = await requestLines(mock);
		expect(lines[lines.length - 1]).toBe(`GET /v1/tasks/${taskId}`);
		expect(lines.filter((l) => l.includes('/artifacts'))).toHaveLength(0);
	});

	it('with Continue On Fail, a FAILURE becomes an error item carrying task_id and fail_reason', async () => {
		const result = await runVideo(mock, generate('[[fail=nsfw detected]] [[instant]]'), { continueOnFail: true });
		expect(result.error).toBeUndefined();
		const [item] = result.output();
		expect(item.json).toMatchObject({
			error: expect.stringContaining('nsfw detected'),
			task_id: expect.stringMatching(/^task_/),
			status: 'FAILURE',
			fail_reason: 'nsfw detected',
			model: 'sd_2.0_fast_discount',
		});
		expect(item.pairedItem).toEqual({ item: 0 });
	});

	it('stops at maxWait with the task_id and how to resume; resuming later downloads the video', async () => {
		const result = await runVideo(mock, generate('slow one [[runMs=6000]]', { options: { pollInterval: 1, maxWait: 0.05 } }));
		const error = result.nodeError('Video') as Error & { description?: string };
		expect(error.message).toMatch(/did not finish within 0\.05 minute\(s\) \(last status (QUEUED|IN_PROGRESS)/);
		const taskId = /task_\w+/.exec(error.message)![0];
		expect(error.description).toContain(`"Wait for Completion" and Task ID ${taskId}`);
		expect(await mock.submissions()).toBe(1);

		const resumed = await runVideo(mock, { operation: 'waitForCompletion', taskId, options: { pollInterval: 1 } });
		try {
			expect(resumed.error).toBeUndefined();
			const [item] = resumed.output();
			expect(item.json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			expect(sha256(await resumed.readBinary(item))).toBe(await mock.artifactSha256(taskId));
			expect(await mock.submissions()).toBe(1);
		} finally {
			await resumed.cleanup();
		}
	});

	it('Get Status, List Artifacts and Download work by task_id', async () => {
		const submitted = await runVideo(mock, { ...generate('[[instant]] later'), waitForCompletion: false });
		const taskId = submitted.output()[0].json.task_id as string;
		const status = await runVideo(mock, { operation: 'getStatus', taskId });
		expect(status.output()[0].json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
		const listed = await runVideo(mock, { operation: 'listArtifacts', taskId });
		expect(listed.output()[0].json).toEqual({ task_id: taskId, artifacts: [expect.objectContaining({ key: 'video' })] });
		const downloaded = await runVideo(mock, { operation: 'download', taskId, binaryPropertyName: 'movie' });
		try {
			const [item] = downloaded.output();
			expect(item.json).toMatchObject({ task_id: taskId, artifact_key: 'video', mime_type: 'video/mp4' });
			expect(sha256(await downloaded.readBinary(item, 'movie'))).toBe(await mock.artifactSha256(taskId));
		} finally {
			await downloaded.cleanup();
		}
	});

	it('an expired temporary URL fails with a clear error naming the task and the artifact', async () => {
		const submitted = await runVideo(mock, { ...generate('[[instant]] [[ttlMs=1]]'), waitForCompletion: false });
		const taskId = submitted.output()[0].json.task_id as string;
		await new Promise((r) => setTimeout(r, 50));
		const result = await runVideo(mock, { operation: 'waitForCompletion', taskId, options: FAST });
		const error = result.nodeError('Video') as Error & { description?: string };
		expect(error.message).toContain(`Could not download artifact "video" of task ${taskId}`);
		expect(error.description).toMatch(/temporary URL .* may have expired/);
	});
});
