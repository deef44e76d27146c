/** The content endpoint redirects to a temporary file URL on another host: followed without the key; expiry named. */
import { runWorkflow } from '../harness/engine';
import { generateParams as generate } from '../support/faultTable';
import { startFakeVideoService, VIDEO_BYTES } from '../support/fakeVideoService';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';

const KEY = 'sentinel-key-expired-1f2e3d';

async function runAgainst(cdn: ScriptedServer, operation: 'generate' | 'download') {
	const service = await startFakeVideoService({
		status: () => ({ status: 'SUCCESS' }),
		content: (_req, res) => {
			res.writeHead(302, { location: `${cdn.url}/signed/video.mp4?sig=abc123&exp=1` });
			res.end();
		},
	});
	const parameters =
		operation === 'generate'
			? generate('a fox', { options: { pollInterval: 1, maxWait: 0.1 } })
			: { operation: 'download', taskId: 'task_fake1' };
	const result = await runWorkflow({
		nodes: [{ name: 'Video', type: 'genGatewayVideo', parameters, credentials: true }],
		credentials: { baseUrl: service.url, apiKey: KEY },
	});
	await service.close();
	return result;
}

describe('Video: a content redirect to a temporary URL', () => {
	it('is followed without the key, and the video is stored', async () => {
		const cdn = await startScriptedServer((_req, res) => {
			res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO_BYTES.length });
			res.end(VIDEO_BYTES);
		});
		try {
			const result = await runAgainst(cdn, 'generate');
			expect(result.error).toBeUndefined();
			expect(await result.readBinary(result.output()[0])).toEqual(VIDEO_BYTES);
			expect(cdn.requests.map((r) => r.headers.authorization)).toEqual([undefined]);
		} finally {
			await cdn.close();
		}
	});

	it.each(['generate', 'download'] as const)('%s: a 403 from that host is an expired video URL with the task id, not a key problem', async (operation) => {
		const cdn = await startScriptedServer((_req, res) => {
			res.writeHead(403, { 'content-type': 'application/xml' });
			res.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
		});
		try {
			const result = await runAgainst(cdn, operation);
			const error = result.nodeError('Video') as Error & { description?: string };
			expect(error.message).toMatch(/temporary video URL of task task_fake1 has expired or is gone: 127\.0\.0\.1:\d+ answered 403/);
			expect(error.description).toMatch(/Run "Download" with Task ID task_fake1/);
			expect(`${error.message} ${error.description}`).not.toMatch(/API key's permissions/);
			// The URL's signature is not repeated.
			expect(`${error.message} ${error.description}`).not.toContain('sig=abc123');
		} finally {
			await cdn.close();
		}
	});

	it('a 404 from the service itself (no redirect) keeps the ordinary message', async () => {
		const service = await startScriptedServer((_req, res) => sendJson(res, 404, { error: { message: 'no such task' } }));
		try {
			const result = await runWorkflow({
				nodes: [{ name: 'Video', type: 'genGatewayVideo', parameters: { operation: 'download', taskId: 'task_x' }, credentials: true }],
				credentials: { baseUrl: service.url, apiKey: KEY },
			});
			expect(result.nodeError('Video')!.message).toMatch(/failed with 404: no such task/);
		} finally {
			await service.close();
		}
	});
});
