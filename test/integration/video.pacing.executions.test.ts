// Time: about 20 s (4 executions of 6 tasks of 1–3 s, started 2 s apart, under a 6 requests/s limit on their one key)
/**
 * Pacing on n8n's real engine, several executions on one key (queue mode, or a sub-workflow per item): four
 * executions of Generate with Wait for Completion run in one process, each with its own execution id, all on the same
 * credential, each starting 2 s after the one before (while the others are sending). A 429 that one of them gets slows
 * all of them, and a later one starts at the pace already learnt (the pace belongs to the credential, pacer.ts)
 * instead of bursting and learning the limit alone. Every item is delivered with exact bytes, none fails for a 429,
 * each task is submitted once, few requests are refused, and the wall time stays near the floor.
 */
import { HARNESS_NODE_TYPES, runWorkflowsTogether } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import type { MockClient } from '../mock/process';
import { expectExactVideos, expectOnceAndPaced, floorSeconds, RATE, spawnPacedMock, TASKS, TASK_SECONDS } from '../support/pacing';
import { videoRunOptions } from '../support/videoRun';

const EXECUTIONS = 4;
const PER_EXECUTION = TASKS / EXECUTIONS;
/** Execution k starts k × this later (as queued executions reach a worker): each one joins the others' traffic. */
const STAGGER_MS = 2000;

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnPacedMock();
});
afterAll(async () => await mock?.stop());

it(`${EXECUTIONS} executions of ${PER_EXECUTION} tasks ${STAGGER_MS / 1000} s apart on one key at ${RATE}/s: exact, once, few 429s`, async () => {
	const started = Date.now();
	const runs: RunResult[] = await runWorkflowsTogether(
		Array.from({ length: EXECUTIONS }, (_, e) => {
			const video = videoRunOptions(
				mock,
				{
					operation: 'generate',
					model: 'gk_video',
					prompt: '={{ $json.prompt }}',
					options: { pollInterval: 1, maxWait: 5, maxConcurrency: 5 },
				},
				{
					input: Array.from({ length: PER_EXECUTION }, (_, i) => ({ prompt: `execution ${e + 1} clip ${i + 1}` })),
					executionId: `pacing-executions-${process.pid}-${e + 1}`,
				},
			);
			const pause = { name: 'Pause', type: HARNESS_NODE_TYPES.pause, parameters: { ms: e * STAGGER_MS } };
			return { ...video, nodes: [pause, ...video.nodes] };
		}),
	);
	const wallSeconds = (Date.now() - started) / 1000;
	try {
		const delivered: string[] = [];
		for (const run of runs) {
			// No item failed (a 429 the node gave up on would fail the node: no Continue On Fail here).
			expect(run.error).toBeUndefined();
			const items = run.output();
			expect(items).toHaveLength(PER_EXECUTION);
			delivered.push(...(await expectExactVideos(run, items, mock)));
		}
		expect(new Set(delivered).size).toBe(TASKS);

		// One pace for the key: 4.7–4.8% answered 429, all in the first execution's first burst (before the first
		// 429), at 1.07–1.09× the floor. A pace per execution (each one starting unpaced and learning the limit alone):
		// 19.4–19.5%, a burst of 429s as each execution starts, at 1.82×.
		// The span the service saw: 1.09× the floor alone beside two busy loops; the whole test's wall reached 1.52× in
		// a CI run with three other jest workers driving n8n beside it. 1.75 still fails a key paced at half its limit
		// or less (2× and more); a pace per execution is what the 429 share above catches.
		const floor = floorSeconds(TASKS, TASK_SECONDS[1], RATE);
		await expectOnceAndPaced(mock, `pacing, ${EXECUTIONS} executions on one key`, { seconds: wallSeconds, floor, within: 1.75 }, 0.1);
	} finally {
		// They share one binary folder: the first cleanup removes it.
		for (const run of runs) await run.cleanup();
	}
});
