/**
 * Read what the service says: documented top-level fields win over wrappers; the statuses of the real gateway
 * (new-api) poll on, an ending status elsewhere fails at once, an unlisted one polls until Max Wait and is named.
 */
import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import { generateParams as generate } from '../support/faultTable';
import { startFakeVideoService, VIDEO_BYTES } from '../support/fakeVideoService';
import type { FakeVideoOptions } from '../support/fakeVideoService';

async function generateAgainst(options: FakeVideoOptions, wait = { pollInterval: 1, maxWait: 0.1 }) {
	const server = await startFakeVideoService(options);
	const started = Date.now();
	const result: RunResult = await runWorkflow({
		nodes: [{ name: 'Video', type: 'genGatewayVideo', parameters: generate('a fox', { options: wait }), credentials: true }],
		credentials: { baseUrl: server.url, apiKey: 'k-123456' },
	});
	return { server, result, elapsed: Date.now() - started };
}

describe('Video: reading the status and artifact records', () => {
	it('{"status":"SUCCESS","data":{...}} is SUCCESS: the documented top-level field wins', async () => {
		const { server, result } = await generateAgainst({ status: () => ({ status: 'SUCCESS', data: { seconds: 5 } }) });
		try {
			expect(result.error).toBeUndefined();
			expect(result.output()[0].json.status).toBe('SUCCESS');
			expect(server.polls()).toBe(1);
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
		} finally {
			await server.close();
		}
	});

	it('{"status":"FAILURE","fail_reason":…,"data":{...}} fails at once with the reason', async () => {
		const { server, result } = await generateAgainst({
			status: () => ({ status: 'FAILURE', fail_reason: 'blocked', data: { status: 'IN_PROGRESS' } }),
		});
		try {
			expect(result.nodeError('Video')!.message).toMatch(/^Video task task_fake1 failed: blocked/);
			expect(server.polls()).toBe(1);
		} finally {
			await server.close();
		}
	});

	it('a status wrapped in data only (no top-level status) is still read', async () => {
		const { server, result } = await generateAgainst({ status: () => ({ data: { status: 'SUCCESS' } }) });
		try {
			expect(result.error).toBeUndefined();
		} finally {
			await server.close();
		}
	});

	it.each([
		['CANCELLED', { status: 'CANCELLED' }, /^Video task task_fake1 ended with status "CANCELLED": no reason given/],
		['expired', { status: 'expired', fail_reason: 'url gone' }, /^Video task task_fake1 ended with status "EXPIRED": url gone/],
		['FAILED', { status: 'FAILED' }, /^Video task task_fake1 ended with status "FAILED"/],
		['ERROR', { status: 'ERROR' }, /^Video task task_fake1 ended with status "ERROR"/],
		['no status', { task_id: 'task_fake1', state: 'done' }, /answer has no "status" field \(fields: task_id, state\)/],
	])('%s ends the wait at once as a failure naming it, not polled until Max Wait', async (_, body, pattern) => {
		const { server, result, elapsed } = await generateAgainst({ status: () => body });
		try {
			expect(result.nodeError('Video')!.message).toMatch(pattern);
			expect(server.polls()).toBe(1);
			expect(elapsed).toBeLessThan(3000);
		} finally {
			await server.close();
		}
	});

	it("new-api's stored statuses poll on: NOT_START → SUBMITTED → QUEUED → IN_PROGRESS → UNKNOWN → SUCCESS", async () => {
		const sequence = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'UNKNOWN', 'SUCCESS'];
		const progress = ['0%', '10%', '20%', '30%', '30%', '100%'];
		const { server, result } = await generateAgainst(
			{
				status: (poll) => {
					const at = Math.min(poll, sequence.length) - 1;
					return { task_id: 'task_fake1', platform: 'vendor', status: sequence[at], progress: progress[at], fail_reason: '', finished_at: 0 };
				},
			},
			{ pollInterval: 1, maxWait: 0.5 },
		);
		try {
			expect(result.error).toBeUndefined();
			expect(server.polls()).toBe(sequence.length);
			expect(result.output()[0].json).toMatchObject({ status: 'SUCCESS', progress: '100%' });
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
		} finally {
			await server.close();
		}
	});

	it('a status nobody lists polls on until Max Wait, and the timeout names it', async () => {
		const { server, result, elapsed } = await generateAgainst(
			{ status: () => ({ status: 'PAUSED', progress: '40%' }) },
			{ pollInterval: 1, maxWait: 0.05 },
		);
		try {
			const error = result.nodeError('Video') as Error & { description?: string };
			expect(error.message).toMatch(/^Video task task_fake1 did not finish within 0.05 minute\(s\) \(last status PAUSED, 40%\)/);
			expect(error.description).toMatch(/The service reported "PAUSED", which neither the service contract nor new-api lists/);
			expect(server.polls()).toBeGreaterThanOrEqual(3);
			expect(elapsed).toBeGreaterThanOrEqual(3000);
		} finally {
			await server.close();
		}
	});

	it('{"artifacts":[...],"data":{...}} lists the artifacts', async () => {
		const { server, result } = await generateAgainst({
			status: () => ({ status: 'SUCCESS' }),
			artifacts: { artifacts: [{ key: 'video', type: 'video', mime_type: 'video/mp4' }], data: { total: 1 } },
		});
		try {
			expect(result.error).toBeUndefined();
			expect(result.output()[0].json.artifacts).toEqual([{ key: 'video', type: 'video', mime_type: 'video/mp4' }]);
		} finally {
			await server.close();
		}
	});

	it('an artifact listing in an unknown wrapper: the content of key "video" is fetched anyway, as Download does', async () => {
		const { server, result } = await generateAgainst({
			status: () => ({ status: 'SUCCESS' }),
			artifacts: { result: { files: [{ key: 'video' }] } },
		});
		try {
			expect(result.error).toBeUndefined();
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
		} finally {
			await server.close();
		}
	});
});
