import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Operation } from '../../shared/run/router';
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

/** An operation on the task of each item (Get Status, List Artifacts, Download): its Task ID read, then `work`. */
export function taskOperation(
	properties: INodeProperties[],
	work: (ctx: IExecuteFunctions, taskId: string, lane: Lane) => Promise<INodeExecutionData>,
): Operation {
	return {
		properties,
		policy: () => videoRun(),
		run: async (ctx, itemIndex, lane) => await work(ctx, readTaskId(ctx, itemIndex), lane),
	};
}
