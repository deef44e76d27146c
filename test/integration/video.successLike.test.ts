/**
 * Success-like statuses of other gateways (COMPLETED, SUCCEEDED, DONE, in any case) end a wait as SUCCESS does: the
 * task goes on to its artifact list and the video, in Generate, Wait for Completion and Check alike (issue 37, 14).
 */
import type { MockClient } from '../mock/process';
import { startFakeVideoService, VIDEO_BYTES } from '../support/fakeVideoService';
import { generateParams as generate } from '../support/faultTable';
import { runVideo } from '../support/videoRun';

const at = (server: { url: string }) => ({ url: server.url, apiKey: 'k-123456' }) as unknown as MockClient;
const STATUSES = ['COMPLETED', 'succeeded', 'Done'];

describe('Video: a success-like status of another gateway is a success', () => {
	it.each(STATUSES)('Generate: %s goes on to the artifacts and the video after one status check', async (status) => {
		const server = await startFakeVideoService({ status: () => ({ status, progress: '100%' }) });
		try {
			const result = await runVideo(at(server), generate('a fox', { options: { pollInterval: 1, maxWait: 0.05 } }));
			expect(result.error).toBeUndefined();
			expect(server.polls()).toBe(1);
			expect(result.output()[0].json.status).toBe(status.toUpperCase());
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
		} finally {
			await server.close();
		}
	});

	it.each(STATUSES)('Wait for Completion: %s downloads the video after one status check', async (status) => {
		const server = await startFakeVideoService({ taskId: 'task_ok', status: () => ({ task_id: 'task_ok', status }) });
		try {
			const result = await runVideo(at(server), {
				operation: 'waitForCompletion',
				taskId: 'task_ok',
				options: { pollInterval: 1, maxWait: 0.05 },
			});
			expect(result.error).toBeUndefined();
			expect(server.polls()).toBe(1);
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
		} finally {
			await server.close();
		}
	});

	it.each(STATUSES)('Check: %s is Done with the video, nothing on Still Running', async (status) => {
		const server = await startFakeVideoService({ taskId: 'task_ok', status: () => ({ task_id: 'task_ok', status }) });
		try {
			const submittedAt = new Date(Date.now() - 10_000).toISOString();
			const result = await runVideo(at(server), { operation: 'check' }, {
				input: [{ task_id: 'task_ok', submitted_at: submittedAt, model: 'm1', status: 'IN_PROGRESS', checks: 1 }],
			});
			expect(result.error).toBeUndefined();
			const [done, running] = result.outputs('Video');
			expect(running).toEqual([]);
			expect(done).toHaveLength(1);
			expect(await result.readBinary(done[0])).toEqual(VIDEO_BYTES);
		} finally {
			await server.close();
		}
	});
});
