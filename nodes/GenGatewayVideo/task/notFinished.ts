import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import type { Lane } from '../../shared/transport/lane';
import { getTaskStatus } from './client';
import { FAILURE, meaningOf } from './status';

/**
 * Why a task shows no artifacts: new-api lists `[]` before SUCCESS (our mock answered 409), which is not an error of
 * the service but of the moment. One status request tells a task still running or failed apart from one that ended
 * without artifacts; List Artifacts and Download then say so plainly instead of showing an empty list or a 409.
 * Undefined when the task succeeded, or when its status cannot be read (the caller's own answer stands).
 */
export async function notFinishedError(
	ctx: IExecuteFunctions,
	taskId: string,
	operation: string,
	lane: Lane,
): Promise<NodeOperationError | undefined> {
	const { itemIndex } = lane;
	const status = await getTaskStatus(ctx, taskId, lane).catch(() => undefined);
	if (!status) return undefined;
	const meaning = meaningOf(status.status);
	if (meaning === 'success') return undefined;
	const progress = status.progress ? `, ${status.progress}` : '';
	const error =
		meaning === 'failure'
			? new NodeOperationError(
					ctx.getNode(),
					`Video task ${taskId} has no artifacts: it ` +
						`${status.status === FAILURE ? 'failed' : `ended with status ${JSON.stringify(status.status)}`}: ` +
						`${status.fail_reason ?? 'no reason given'}`,
					{
						itemIndex,
						description: 'A failed task has nothing to list or download. Correct the request and generate it again.',
					},
				)
			: new NodeOperationError(
					ctx.getNode(),
					`Video task ${taskId} is still running (status ${status.status}${progress}): it has no artifacts yet`,
					{
						itemIndex,
						description:
							`"${operation}" works once the task has succeeded. To wait for it and get the video, use "Wait for ` +
							`Completion" (or the durable wait's "Check") with Task ID ${taskId}; the task was not resubmitted.`,
					},
				);
	Object.assign(error.context, { task_id: taskId, status: status.status, progress: status.progress ?? null });
	return error;
}
