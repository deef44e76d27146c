import type { Lane } from '../../shared/transport/lane';
import type { TaskStatus } from './client';

/**
 * How one task is waited for (Generate, Wait for Completion, Check), called `wait` wherever it goes: built once per
 * item by actions/waitFields.ts (`taskWait`) from the node's Options and the item's lane (every request of the item
 * goes in it), read by poll.ts and outcome.ts. Limits: docs/service-interface.md §8.
 */
export interface TaskWait extends Lane {
	pollIntervalMs: number;
	/** Counted from `since`: the budget is per task, not per try of the node. */
	maxWaitMs: number;
	/** When the wait began (epoch ms): the task's submission, also across Retry On Fail; now when not given. */
	since?: number;
	/** Told every status seen. */
	onStatus?: (status: TaskStatus) => void;
	/** Asked before each wait: true ends the polling (another item failed a run that stops at the first failure). */
	stop?: () => boolean;
}
