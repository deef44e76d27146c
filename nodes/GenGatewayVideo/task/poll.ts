import type { IExecuteFunctions } from 'n8n-workflow';

import { pacerFor, waitFor } from '../../shared/transport/transport';
import { queryTask } from './client';
import type { TaskStatus } from './client';
import type { WaitOptions } from './waitOptions';

/** The one poll loop of a video task. */

export interface WaitResult {
	status: TaskStatus;
	polls: number;
	waitedMs: number;
	/** True when maxWait ran out before SUCCESS or FAILURE. */
	timedOut: boolean;
	/** True when `stop` ended the polling before SUCCESS or FAILURE. */
	stopped?: boolean;
	/** Set when the service answered a status the contract does not list (quoted): polling ends at once. */
	unexpected?: string;
}

/**
 * Polls until SUCCESS or FAILURE (returned at once, no further poll) or until maxWait. The first poll is immediate:
 * a resumed task may be finished already. The wait before the second poll is 0.5–1.5 intervals, different for each
 * task of the execution (pacer.ts `nextPollPhase`), so that tasks submitted together poll spread over the interval
 * instead of in bursts; later polls follow one interval apart. A 429 is waited out until Max Wait (the deadline).
 * Every wait ends at once when the execution is cancelled.
 */
export async function pollTask(ctx: IExecuteFunctions, taskId: string, options: WaitOptions): Promise<WaitResult> {
	const started = options.since ?? Date.now();
	const deadline = started + options.maxWaitMs;
	for (let polls = 1; ; polls++) {
		const { status, unexpected } = await queryTask(ctx, taskId, options.itemIndex, options.gate, deadline);
		options.onStatus?.(status);
		const waitedMs = Date.now() - started;
		if (status.status === 'SUCCESS' || status.status === 'FAILURE') {
			return { status, polls, waitedMs, timedOut: false };
		}
		// CANCELLED, EXPIRED, no status at all…: waiting 30 minutes would not make it one of the four states.
		if (unexpected) return { status, polls, waitedMs, timedOut: false, unexpected };
		const remaining = options.maxWaitMs - waitedMs;
		if (remaining <= 0) return { status, polls, waitedMs, timedOut: true };
		if (options.stop?.()) return { status, polls, waitedMs, timedOut: false, stopped: true };
		const phase = polls === 1 ? (pacerFor(ctx)?.nextPollPhase() ?? 1) : 1;
		await waitFor(ctx, Math.min(Math.round(options.pollIntervalMs * phase), remaining));
	}
}
