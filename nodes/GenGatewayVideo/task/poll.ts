import type { IExecuteFunctions } from 'n8n-workflow';

import { pacerFor, waitFor } from '../../shared/transport/transport';
import { queryTask } from './client';
import type { TaskStatus } from './client';
import { isFinal, meaningOf } from './status';
import type { TaskWait } from './taskWait';

/** The one poll loop of a video task. */

export interface WaitResult {
	status: TaskStatus;
	polls: number;
	waitedMs: number;
	/** True when maxWait ran out before the task ended. */
	timedOut: boolean;
	/** True when `stop` ended the polling before the task ended. */
	stopped?: boolean;
	/** Set when the service answered without any status (which fields came instead): polling ends at once. */
	unexpected?: string;
	/** Statuses nobody lists (status.ts) seen while polling on: the timeout's message names them. */
	unlisted: string[];
}

/**
 * Polls until the task ends (SUCCESS, FAILURE or another final status of status.ts: returned at once, no further
 * poll) or until maxWait; NOT_START, SUBMITTED, QUEUED, IN_PROGRESS, UNKNOWN and unlisted statuses poll on. The first
 * poll is immediate: a resumed task may be finished already. The wait before the second poll is 0.5–1.5 intervals, different for each
 * task of the execution (pacer.ts `nextPollPhase`), so that tasks submitted together poll spread over the interval
 * instead of in bursts; later polls follow one interval apart. A 429 is waited out until Max Wait (the deadline).
 * Every wait ends at once when the execution is cancelled.
 */
export async function pollTask(ctx: IExecuteFunctions, taskId: string, wait: TaskWait): Promise<WaitResult> {
	const started = wait.since ?? Date.now();
	const deadline = started + wait.maxWaitMs;
	const unlisted: string[] = [];
	for (let polls = 1; ; polls++) {
		const { status, unexpected } = await queryTask(ctx, taskId, wait, deadline, started);
		wait.onStatus?.(status);
		const waitedMs = Date.now() - started;
		const ended = { status, polls, waitedMs, unlisted };
		if (isFinal(status.status)) return { ...ended, timedOut: false };
		// No status at all (a wrong base URL, a page in JSON's clothes): waiting would not make one appear.
		if (unexpected) return { ...ended, timedOut: false, unexpected };
		if (meaningOf(status.status) === 'unlisted' && !unlisted.includes(status.status)) unlisted.push(status.status);
		const remaining = wait.maxWaitMs - waitedMs;
		if (remaining <= 0) return { ...ended, timedOut: true };
		if (wait.stop?.()) return { ...ended, timedOut: false, stopped: true };
		const phase = polls === 1 ? (pacerFor(ctx)?.nextPollPhase() ?? 1) : 1;
		await waitFor(ctx, Math.min(Math.round(wait.pollIntervalMs * phase), remaining));
	}
}
