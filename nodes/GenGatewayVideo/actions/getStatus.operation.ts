import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runItems } from '../../shared/run/runItems';
import { getTaskStatus } from '../task/client';
import { videoRun } from './runPolicy';
import { readTaskId, taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['getStatus'])];

/** One status query per item: status, progress, fail_reason. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return [
		await runItems(
			this,
			async (itemIndex, gate) => {
				const status = await getTaskStatus(this, readTaskId(this, itemIndex), itemIndex, gate);
				return { json: { ...status }, pairedItem: { item: itemIndex } };
			},
			videoRun(),
		),
	];
}
