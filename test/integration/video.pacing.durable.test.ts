// Time: about 30 s (24 tasks of 8–12 s under a 6 requests/s limit, submitted, then checked round after round)
/**
 * Pacing on n8n's real engine, the durable wait (issue 22's small case, durable variant): Generate without waiting,
 * then Check round after round, its Still Running items going round again as they would through n8n's Wait node.
 * A short pause and another run of the node with those items stand in for the Wait node; every round runs under the
 * same execution id, as n8n resumes a waiting execution under its own (the pace is the credential's, pacer.ts). Every
 * item is delivered with exact bytes, none fails for a 429, each task is submitted once, few requests are refused,
 * and the whole thing ends in bounded time.
 */
import type { IDataObject } from 'n8n-workflow';

import type { RunResult } from '../harness/engine';
import type { MockClient } from '../mock/process';
import { expectExactVideos, expectOnceAndPaced, floorSeconds, pacedInput, RATE, spawnPacedMock, TASKS } from '../support/pacing';
import { runVideo } from '../support/videoRun';

/**
 * Longer tasks than the in-process case's 1–3 s: the submissions alone take N/R = 4 s under the limit, so tasks that
 * short would all be over by the first check and Still Running would never be taken.
 */
const TASK_SECONDS: [number, number] = [8, 12];
/**
 * The last prompts' tasks run 15 s (a mock marker), so they are still running at the first check however slowly a
 * loaded machine submits: Still Running is always taken (measured: a release rehearsal's three concurrent in-band
 * runs once made the submissions so slow that the 8–12 s tasks were all over by the first check).
 */
const LONG_MS = 15_000;
const LONG_LAST = 3;
/** The Wait node's stand-in: the pause before each round. */
const PAUSE_MS = 1000;
/** Tasks end within 12 s of their submission, about three rounds; more means items go round without end. */
const MAX_ROUNDS = 8;
const OPTIONS = { maxWait: 5, maxConcurrency: 5 };

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnPacedMock(TASK_SECONDS);
});
afterAll(async () => await mock?.stop());

it(`durable wait, ${TASKS} tasks at ${RATE}/s: Generate, then Check until none is running: all exact, once each, few 429s`, async () => {
	const executionId = `durable-pacing-${process.pid}`;
	const runs: RunResult[] = [];
	const started = Date.now();
	try {
		const submitted = await runVideo(
			mock,
			{ operation: 'generate', model: 'gk_video', prompt: '={{ $json.prompt }}', waitForCompletion: false, options: OPTIONS },
			{
				input: pacedInput('durable clip').map((item, i) =>
					i >= TASKS - LONG_LAST ? { prompt: `${item.prompt} [[runMs=${LONG_MS}]]` } : item,
				),
				executionId,
			},
		);
		runs.push(submitted);
		expect(submitted.error).toBeUndefined();
		let pending: IDataObject[] = submitted.output('Video').map((item) => item.json);
		expect(pending.map((json) => json.status)).toEqual(Array(TASKS).fill('SUBMITTED'));

		const delivered: string[] = [];
		let rounds = 0;
		let wentRound = 0;
		while (pending.length > 0 && rounds < MAX_ROUNDS) {
			rounds++;
			await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
			const checked = await runVideo(mock, { operation: 'check', options: OPTIONS }, { input: pending, executionId });
			runs.push(checked);
			// No item failed (a 429 the node gave up on would fail the node: no Continue On Fail here).
			expect(checked.error).toBeUndefined();
			const [done, running] = checked.outputs('Video');
			delivered.push(...(await expectExactVideos(checked, done, mock)));
			pending = running.map((item) => item.json);
			wentRound += pending.length;
		}
		const wallSeconds = (Date.now() - started) / 1000;

		// Issue 22's floor for the batch, plus the pause before the first check.
		const floor = floorSeconds(TASKS, LONG_MS / 1000, RATE) + PAUSE_MS / 1000;
		expect(pending).toEqual([]);
		expect(wentRound).toBeGreaterThan(0);
		expect(delivered).toHaveLength(TASKS);
		expect(new Set(delivered).size).toBe(TASKS);
		// Once-only (one task per item, however many rounds it went), and paced across rounds: 4–6% measured (the first
		// burst, before the first 429); without the pacer 39–41%. Another execution id per round: 3.9% (the
		// credential's pace carries over); 13% when the pace was per execution. Wall: alone about 1× the floor; 2×
		// leaves room for a loaded machine (1.65× measured under a release rehearsal).
		const what = `durable pacing (${rounds} rounds, ${wentRound} went round)`;
		await expectOnceAndPaced(mock, what, { seconds: wallSeconds, floor, within: 2 }, 0.1);
	} finally {
		for (const run of runs) await run.cleanup();
	}
});
