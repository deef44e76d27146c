/**
 * A failing item must not hide the other items' paid tasks (without Continue On Fail n8n keeps only the thrown
 * error), and a run that is failing submits no more paid tasks and stops waiting.
 */
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams as generate, taskIdIn } from '../support/faultTable';
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';
import { runVideo } from '../support/videoRun';
import { runWorkflow } from '../harness/engine';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-report-9a8b7c' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

describe('Video: a failing item names every task the run paid for', () => {
	it('a fox, a cat (FAILURE), a dog: the error names the three tasks, their state and how to collect them', async () => {
		const input = [
			{ prompt: '[[instant]] a fox' },
			{ prompt: '[[queuedMs=0]] [[runMs=1200]] [[fail=the cat was blocked]] a cat' },
			{ prompt: '[[queuedMs=0]] [[runMs=8000]] a dog' },
		];
		const started = Date.now();
		const result = await runVideo(mock, generate('={{ $json.prompt }}'), { input });
		const elapsed = Date.now() - started;
		try {
			const error = result.nodeError('Video') as Error & { description?: string; context?: Record<string, unknown> };
			const posts = (await mock.log()).filter((e) => e.method === 'POST');
			expect(posts).toHaveLength(3);
			const ids = (await mock.log())
				.map((e) => /^\/v1\/tasks\/(task_[0-9a-f]+)$/.exec(e.path)?.[1])
				.filter((id): id is string => !!id);
			const unique = [...new Set(ids)];
			expect(unique).toHaveLength(3);
			// The error n8n shows is the cat's FAILURE…
			expect(error.message).toMatch(/^Video task task_[0-9a-f]+ failed: the cat was blocked/);
			const catId = taskIdIn(error.message);
			// …and it names all three tasks, with item, status and whether the video is downloaded.
			for (const id of unique) expect(error.message).toContain(id);
			const description = error.description ?? '';
			const line = (item: number) => new RegExp(`item ${item}: task_id (task_[0-9a-f]+) \\(([A-Z_]+); ([^)]*)\\)`).exec(description);
			expect(line(0)?.[2]).toBe('SUCCESS');
			expect(line(0)?.[3]).toMatch(/video downloaded/);
			expect(line(1)?.[1]).toBe(catId);
			expect(line(1)?.[2]).toBe('FAILURE');
			expect(line(2)?.[2]).toMatch(/QUEUED|IN_PROGRESS/);
			expect(line(2)?.[3]).toMatch(/Wait for Completion/);
			expect(description).toMatch(/"Wait for Completion".*"Download"/);
			// Failing fast: the dog (8 s) is not waited for once the run is bound to fail.
			expect(elapsed).toBeLessThan(6000);
		} finally {
			await result.cleanup();
		}
	});

	it('a submission refused by the service stops the run before the next item is paid for', async () => {
		const server = await startScriptedServer((req, res) => {
			const prompt = (JSON.parse(req.body || '{}') as { prompt?: string }).prompt;
			if (prompt === 'a cat') return sendJson(res, 400, { error: { message: 'reference image unreachable' } });
			sendJson(res, 200, { task_id: `task_${prompt === 'a fox' ? 'f0' : 'd0'}` });
		});
		try {
			const result = await runWorkflow({
				nodes: [
					{
						name: 'Video',
						type: 'genGatewayVideo',
						parameters: generate('={{ $json.prompt }}', { waitForCompletion: false, options: { maxConcurrency: 1 } }),
						credentials: true,
					},
				],
				input: [{ prompt: 'a fox' }, { prompt: 'a cat' }, { prompt: 'a dog' }],
				credentials: { baseUrl: server.url, apiKey: 'k-123456' },
			});
			const error = result.nodeError('Video') as Error & { description?: string };
			expect(postsTo(server, '/v1/tasks/vendor').map((r) => JSON.parse(r.body).prompt)).toEqual(['a fox', 'a cat']);
			expect(error.message).toMatch(/failed with 400: reference image unreachable/);
			expect(error.message).toContain('item 0 task_f0');
			expect(error.description).toMatch(/Not submitted \(nothing paid\).*item\(s\) 2/);
		} finally {
			await server.close();
		}
	});
});
