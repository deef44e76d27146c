/**
 * Issue 22's small pacing case, shared by the in-process wait (video.pacing.test.ts), the durable wait
 * (video.pacing.durable.test.ts) and several executions on one key (video.pacing.executions.test.ts): a batch larger
 * than the mock's rate limit lets through at once, tasks of 1–3 s unless a test says otherwise.
 */
import type { INodeExecutionData } from 'n8n-workflow';

import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import type { RunResult } from '../harness/engine';
import { sha256 } from './videoRun';

export const TASKS = 24;
export const RATE = 6;
export const TASK_SECONDS: [number, number] = [1, 3];

export const spawnPacedMock = async (taskSeconds = TASK_SECONDS): Promise<MockClient> =>
	await spawnMockProcess({ limits: { rateLimit: RATE, taskSeconds } });

/** One input item per task, each with its own prompt. */
export const pacedInput = (label: string) => Array.from({ length: TASKS }, (_, i) => ({ prompt: `${label} ${i + 1}` }));

/** Issue 22's floor for N tasks of T seconds at R requests/s (each task: submit, status, artifact list, content). */
export function floorSeconds(n: number, t: number, r: number): number {
	return Math.max((4 * n) / r, t + (3 * n) / r, n / r + t);
}

/** Each item ended SUCCESS (no error item) with the exact bytes of its task's video; returns the task ids. */
export async function expectExactVideos(result: RunResult, items: INodeExecutionData[], mock: MockClient): Promise<string[]> {
	const ids: string[] = [];
	for (const item of items) {
		expect(item.json.error).toBeUndefined();
		expect(item.json.status).toBe('SUCCESS');
		const taskId = item.json.task_id as string;
		ids.push(taskId);
		expect(sha256(await result.readBinary(item))).toBe(await mock.artifactSha256(taskId));
	}
	return ids;
}

/** The mock's counters for the run, with one line of output (wall, floor, requests per task, share answered 429). */
export async function pacingStats(mock: MockClient, what: string, wallSeconds: number, floor: number) {
	const stats = await mock.keyStats();
	const share429 = stats.limited / stats.requests;
	process.stdout.write(
		`${what}: ${TASKS} tasks at ${RATE}/s: wall ${wallSeconds.toFixed(1)} s, floor ${floor.toFixed(1)} s ` +
			`(${(wallSeconds / floor).toFixed(2)}×), ${stats.requests} requests (${(stats.requests / TASKS).toFixed(2)}/task), ` +
			`${stats.limited} answered 429 (${(share429 * 100).toFixed(1)}%)\n`,
	);
	return { ...stats, share429 };
}

/** A credential of its own, for a test whose 429s would otherwise pace the next tests' runs (the pace is per credential). */
export const RATE_LIMITED_CREDENTIAL = { id: 'rateLimitedCredential', name: 'Rate limited account' };

/**
 * Seconds from the first to the last request the service saw: the time the pacing governs. The test's own wall also
 * holds the harness's start (loading n8n's engine, building the runs), which on a loaded 2-core CI machine took
 * seconds that no pacer decides.
 */
export async function serviceSpanSeconds(mock: MockClient): Promise<number> {
	const times = (await mock.log()).filter((entry) => entry.path.startsWith('/v1/')).map((entry) => Date.parse(entry.time));
	return times.length < 2 ? 0 : (Math.max(...times) - Math.min(...times)) / 1000;
}

/**
 * The batch's stats line (pacingStats), then: once-only (the mock created exactly one task per item), at most
 * `max429` of requests answered 429, and the service's span (first to last request) within `wall.within` (1.5 unless
 * given) × the floor.
 */
export async function expectOnceAndPaced(
	mock: MockClient,
	what: string,
	wall: { seconds: number; floor: number; within?: number },
	max429: number,
) {
	const span = await serviceSpanSeconds(mock);
	const stats = await pacingStats(mock, what, wall.seconds, wall.floor);
	process.stdout.write(`${what}: the service saw requests for ${span.toFixed(1)} s (${(span / wall.floor).toFixed(2)}× the floor)\n`);
	expect(stats.submissions).toBe(TASKS);
	expect(await mock.submissions()).toBe(TASKS);
	expect(stats.share429).toBeLessThanOrEqual(max429);
	expect(span).toBeGreaterThan(0);
	expect(span).toBeLessThanOrEqual((wall.within ?? 1.5) * wall.floor);
	return stats;
}
