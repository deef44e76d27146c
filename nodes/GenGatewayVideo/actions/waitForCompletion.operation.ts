import type { INodeProperties } from 'n8n-workflow';

import type { Operation } from '../../shared/run/router';
import { firstSeen } from '../../shared/run/submissionGuard';
import { completeTask } from '../task/outcome';
import { videoRun } from './runPolicy';
import { readTaskId, taskIdProperty } from './taskId';
import { downloadProperties, readTaskOutput, readWaitFields, taskWait, waitOptionsProperty } from './waitFields';
import type { WaitFields } from './waitFields';

const OPERATION = 'waitForCompletion';

export const properties: INodeProperties[] = [
	taskIdProperty([OPERATION]),
	...downloadProperties([OPERATION]),
	waitOptionsProperty([OPERATION]),
];

/** Resumes a task submitted earlier (in this or another execution): poll until done, then download. */
export const operation: Operation<WaitFields> = {
	properties,
	prepare: (ctx) => readWaitFields(ctx),
	policy: (_ctx, waitFields) => videoRun(waitFields.maxConcurrency),
	run: async (ctx, itemIndex, lane, waitFields) => {
		const taskId = readTaskId(ctx, itemIndex);
		return await completeTask(
			ctx,
			taskId,
			taskWait(waitFields, {
				...lane,
				// Max Wait counts from this run's first try: Retry On Fail does not restart it.
				since: firstSeen(ctx, itemIndex, taskId),
			}),
			readTaskOutput(ctx, itemIndex, { task_id: taskId }),
		);
	},
};
