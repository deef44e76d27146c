// Time: about 35 s under load (24 tasks of 1–3 s under a 6 requests/s limit: the run itself takes ~17 s)
/**
 * Pacing on n8n's real engine (issue 22's small case): one execution of Generate with Wait for Completion, a batch
 * larger than the service's rate limit allows at once. Every item is delivered with exact bytes, none fails for a
 * 429, each task is submitted once, few requests are refused, and the wall time stays near the floor the limit sets.
 */
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { runVideo, sha256 } from '../support/videoRun';

const TASKS = 24;
const RATE = 6;
const TASK_SECONDS: [number, number] = [1, 3];

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ limits: { rateLimit: RATE, taskSeconds: TASK_SECONDS } });
});
afterAll(async () => await mock?.stop());

/** Issue 22's floor for N tasks of T seconds at R requests/s (each task: submit, status, artifact list, content). */
function floorSeconds(n: number, t: number, r: number): number {
	return Math.max((4 * n) / r, t + (3 * n) / r, n / r + t);
}

it(`${TASKS} tasks at ${RATE} requests/s: all delivered exactly, none failed by 429, once each, near the floor`, async () => {
	const input = Array.from({ length: TASKS }, (_, i) => ({ prompt: `paced clip ${i + 1}` }));
	const started = Date.now();
	const result = await runVideo(
		mock,
		{
			operation: 'generate',
			model: 'gk_video',
			prompt: '={{ $json.prompt }}',
			options: { pollInterval: 1, maxWait: 5, maxConcurrency: 5 },
		},
		{ input },
	);
	const wallSeconds = (Date.now() - started) / 1000;
	try {
		expect(result.error).toBeUndefined();
		const items = result.output();
		expect(items).toHaveLength(TASKS);
		const ids = new Set<string>();
		for (const item of items) {
			expect(item.json.status).toBe('SUCCESS');
			const taskId = item.json.task_id as string;
			ids.add(taskId);
			expect(sha256(await result.readBinary(item))).toBe(await mock.artifactSha256(taskId));
		}
		expect(ids.size).toBe(TASKS);

		const stats = await mock.keyStats();
		const share429 = stats.limited / stats.requests;
		const floor = floorSeconds(TASKS, TASK_SECONDS[1], RATE);
		process.stdout.write(
			`pacing: ${TASKS} tasks at ${RATE}/s: wall ${wallSeconds.toFixed(1)} s, floor ${floor.toFixed(1)} s ` +
				`(${(wallSeconds / floor).toFixed(2)}×), ${stats.requests} requests (${(stats.requests / TASKS).toFixed(2)}/task), ` +
				`${stats.limited} answered 429 (${(share429 * 100).toFixed(1)}%)\n`,
		);
		// Once-only: the mock created exactly one task per item.
		expect(stats.submissions).toBe(TASKS);
		expect(await mock.submissions()).toBe(TASKS);
		// Paced: unpaced, a batch like this is refused a third of the time or more.
		expect(share429).toBeLessThanOrEqual(0.1);
		expect(wallSeconds).toBeLessThanOrEqual(1.5 * floor);
	} finally {
		await result.cleanup();
	}
});
