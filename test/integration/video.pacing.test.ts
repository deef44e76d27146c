// Time: about 35 s under load (24 tasks of 1–3 s under a 6 requests/s limit: the run itself takes ~17 s)
/**
 * Pacing on n8n's real engine (issue 22's small case): one execution of Generate with Wait for Completion, a batch
 * larger than the service's rate limit allows at once. Every item is delivered with exact bytes, none fails for a
 * 429, each task is submitted once, few requests are refused, and the wall time stays near the floor the limit sets.
 * The durable wait's counterpart: video.pacing.durable.test.ts.
 */
import type { MockClient } from '../mock/process';
import { expectExactVideos, expectOnceAndPaced, floorSeconds, pacedInput, RATE, spawnPacedMock, TASKS, TASK_SECONDS } from '../support/pacing';
import { runVideo } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnPacedMock();
});
afterAll(async () => await mock?.stop());

it(`${TASKS} tasks at ${RATE} requests/s: all delivered exactly, none failed by 429, once each, near the floor`, async () => {
	const started = Date.now();
	const result = await runVideo(
		mock,
		{
			operation: 'generate',
			model: 'gk_video',
			prompt: '={{ $json.prompt }}',
			options: { pollInterval: 1, maxWait: 5, maxConcurrency: 5 },
		},
		{ input: pacedInput('paced clip') },
	);
	const wallSeconds = (Date.now() - started) / 1000;
	try {
		expect(result.error).toBeUndefined();
		const items = result.output();
		expect(items).toHaveLength(TASKS);
		expect(new Set(await expectExactVideos(result, items, mock)).size).toBe(TASKS);

		const floor = floorSeconds(TASKS, TASK_SECONDS[1], RATE);
		// Once-only, and paced: unpaced, a batch like this is refused a third of the time or more.
		await expectOnceAndPaced(mock, 'pacing', { seconds: wallSeconds, floor }, 0.1);
	} finally {
		await result.cleanup();
	}
});
