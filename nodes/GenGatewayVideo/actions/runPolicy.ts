import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runItems } from '../../shared/run/runItems';
import type { RunPolicy } from '../../shared/run/runItems';
import type { Lane } from '../../shared/transport/lane';
import { DEFAULT_CONCURRENCY } from './waitFields';
import { readTaskId } from './taskId';

/** What an error item of a video operation keeps from its error: which task and model, and how it ended. */
const TASK_ERROR_FIELDS = ['task_id', 'status', 'progress', 'fail_reason', 'model'];

/** Video items run all at once (their waits overlap), their requests through one gate of `concurrency`. */
export const videoRun = (concurrency = DEFAULT_CONCURRENCY): RunPolicy => ({
	concurrency,
	errorFields: TASK_ERROR_FIELDS,
});

/** A one-request operation on the task of each item (Get Status, List Artifacts, Download). */
export async function forEachTask(
	ctx: IExecuteFunctions,
	work: (taskId: string, lane: Lane) => Promise<INodeExecutionData>,
): Promise<INodeExecutionData[][]> {
	return [
		await runItems(ctx, async (itemIndex, lane) => await work(readTaskId(ctx, itemIndex), lane), videoRun()),
	];
}
