import type { RunPolicy } from '../../shared/run/runItems';
import { DEFAULT_CONCURRENCY } from '../task/waitOptions';

/** What an error item of a video operation keeps from its error: which task and model, and how it ended. */
const TASK_ERROR_FIELDS = ['task_id', 'status', 'progress', 'fail_reason', 'model'];

/** Video items run all at once (their waits overlap), their requests through one gate of `concurrency`. */
export const videoRun = (concurrency = DEFAULT_CONCURRENCY): RunPolicy => ({
	concurrency,
	errorFields: TASK_ERROR_FIELDS,
});
