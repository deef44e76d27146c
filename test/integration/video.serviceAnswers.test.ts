/** Read what the service says: documented top-level fields win over wrappers; unlisted statuses end the wait at once. */
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
		['CANCELLED', { status: 'CANCELLED' }, /reported status "CANCELLED", which the service contract does not list/],
		['no status', { task_id: 'task_fake1', state: 'done' }, /reported no "status" field \(fields: task_id, state\)/],
	])('%s is reported at once, quoted, not polled until Max Wait', async (_, body, pattern) => {
		const { server, result, elapsed } = await generateAgainst({ status: () => body });
		try {
			expect(result.nodeError('Video')!.message).toMatch(pattern);
			expect(server.polls()).toBe(1);
			expect(elapsed).toBeLessThan(3000);
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
