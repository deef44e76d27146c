import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runItems } from '../../shared/run/runItems';
import { firstSeen } from '../../shared/run/submissionGuard';
import { completeTask } from '../task/outcome';
import { videoRun } from './runPolicy';
import { readTaskId, taskIdProperty } from './taskId';
import { downloadProperties, readTaskOutput, readWaitFields, taskWait, waitOptionsProperty } from './waitFields';

const OPERATION = 'waitForCompletion';

export const properties: INodeProperties[] = [
	taskIdProperty([OPERATION]),
	...downloadProperties([OPERATION]),
	waitOptionsProperty([OPERATION]),
];

/** Resumes a task submitted earlier (in this or another execution): poll until done, then download. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const waitFields = readWaitFields(this);
	return [
		await runItems(
			this,
			async (itemIndex, lane) => {
				const taskId = readTaskId(this, itemIndex);
				return await completeTask(
					this,
					taskId,
					taskWait(waitFields, {
						...lane,
						// Max Wait counts from this run's first try: Retry On Fail does not restart it.
						since: firstSeen(this, itemIndex, taskId),
					}),
					readTaskOutput(this, itemIndex, { task_id: taskId }),
				);
			},
			videoRun(waitFields.maxConcurrency),
		),
	];
}
