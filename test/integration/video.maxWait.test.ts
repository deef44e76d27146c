/** Max Wait is counted from the task's submission, not restarted by each Retry On Fail try. */
import { runWorkflow } from '../harness/engine';
import { generateParams as generate } from '../support/faultTable';
import { sendJson, startScriptedServer } from '../support/scriptedServer';

describe('Video: the maximum wait is per task', () => {
	it('a retry that resumes the task waits only what is left of Max Wait', async () => {
		let polls = 0;
		const server = await startScriptedServer((req, res) => {
			if (req.method === 'POST') return sendJson(res, 200, { task_id: 'task_slow' });
			polls++;
			// The third poll (about 2 s after submission) fails: the node's first try ends, Retry On Fail resumes.
			if (polls === 3) return sendJson(res, 500, { error: { message: 'status store hiccup' } });
			sendJson(res, 200, { task_id: 'task_slow', status: 'IN_PROGRESS', progress: '10%' });
		});
		try {
			const started = Date.now();
			const result = await runWorkflow({
				nodes: [
					{
						name: 'Video',
						type: 'genGatewayVideo',
						// Max Wait 0.05 min = 3 s, polls every second.
						parameters: generate('a slow fox', { options: { pollInterval: 1, maxWait: 0.05 } }),
						credentials: true,
						retryOnFail: true,
						maxTries: 3,
						waitBetweenTries: 1,
					},
				],
				credentials: { baseUrl: server.url, apiKey: 'k-123456' },
			});
			const elapsed = Date.now() - started;
			// Try 1 fails at the 500, try 2 times out, try 3 finds no budget left: one poll, then the same timeout.
			expect(result.tries('Video')).toBe(3);
			expect(result.nodeError('Video')!.message).toMatch(/^Video task task_slow did not finish within 0\.05 minute\(s\)/);
			expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
			// Restarting the budget on each retry would wait about 2 + 3 + 3 s.
			expect(elapsed).toBeLessThan(6000);
		} finally {
			await server.close();
		}
	});
});

describe('Video: Wait for Completion under Retry On Fail', () => {
	it('Max Wait counts from the first try of the run, not from each retry', async () => {
		let polls = 0;
		const server = await startScriptedServer((_req, res) => {
			polls++;
			if (polls === 3) return sendJson(res, 500, { error: { message: 'status store hiccup' } });
			sendJson(res, 200, { task_id: 'task_slow', status: 'IN_PROGRESS' });
		});
		try {
			const started = Date.now();
			const result = await runWorkflow({
				nodes: [
					{
						name: 'Video',
						type: 'genGatewayVideo',
						parameters: { operation: 'waitForCompletion', taskId: 'task_slow', options: { pollInterval: 1, maxWait: 0.05 } },
						credentials: true,
						retryOnFail: true,
						maxTries: 3,
						waitBetweenTries: 1,
					},
				],
				credentials: { baseUrl: server.url, apiKey: 'k-123456' },
			});
			const elapsed = Date.now() - started;
			expect(result.nodeError('Video')!.message).toMatch(/^Video task task_slow did not finish within 0\.05 minute\(s\)/);
			expect(elapsed).toBeLessThan(6000);
		} finally {
			await server.close();
		}
	});
});
