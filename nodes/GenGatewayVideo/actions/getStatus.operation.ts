import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { getTaskStatus } from '../task/client';
import { forEachTask } from './runPolicy';
import { taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['getStatus'])];

/** One status query per item: status, progress, fail_reason. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await forEachTask(this, async (taskId, lane) => ({
		json: { ...(await getTaskStatus(this, taskId, lane)) },
		pairedItem: { item: lane.itemIndex },
	}));
}
