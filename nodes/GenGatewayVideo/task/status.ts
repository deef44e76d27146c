/**
 * What a task status means for a wait: the one rule (docs/service-interface.md §3). The contract lists four states;
 * the server that implements it (new-api) stores seven, and a new task starts as NOT_START. SUCCESS and FAILURE end a
 * wait; a status that ends a task well on other gateways (COMPLETED, SUCCEEDED, DONE) is a success like SUCCESS (the
 * task goes on to its artifact list); one that ends it badly there is a failure naming that status; anything else
 * keeps polling (a status we do not know may still move on), and the timeout's message names it.
 */

/** Ends the wait: the video is ready. */
const SUCCESS = 'SUCCESS';
/** Ends the wait: the task failed; `fail_reason` may say why. */
export const FAILURE = 'FAILURE';

/** Statuses of a task that is still on its way: the contract's two, and new-api's other stored values. */
const RUNNING: readonly string[] = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'UNKNOWN'];

/** Statuses that end a task well on other gateways (OpenAI, Replicate, fal…): a success, as SUCCESS. */
const ENDED_AS_SUCCESS: readonly string[] = ['COMPLETED', 'SUCCEEDED', 'DONE'];

/** Statuses that end a task on other gateways (task APIs of OpenAI, fal, Replicate…): a failure, named as such. */
const ENDED_AS_FAILURE: readonly string[] = ['FAILED', 'CANCELLED', 'CANCELED', 'EXPIRED', 'ERROR'];

/**
 * - `success`, `failure`: the task ended (failure also for an ending status outside the contract);
 * - `running`: a status known to go on;
 * - `unlisted`: a status nobody listed: polled on, named when the wait runs out.
 */
type StatusMeaning = 'success' | 'failure' | 'running' | 'unlisted';

/** `status` as the task layer holds it: trimmed and upper-cased (new-api's submit answer says "queued"). */
export function meaningOf(status: string): StatusMeaning {
	if (status === SUCCESS || ENDED_AS_SUCCESS.includes(status)) return 'success';
	if (status === FAILURE || ENDED_AS_FAILURE.includes(status)) return 'failure';
	return RUNNING.includes(status) ? 'running' : 'unlisted';
}

/** Ends the wait (SUCCESS, FAILURE or a status that ends a task elsewhere, well or badly). */
export const isFinal = (status: string): boolean => ['success', 'failure'].includes(meaningOf(status));
