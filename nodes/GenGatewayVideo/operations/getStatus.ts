import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { getTaskStatus } from '../task';
import { DEFAULT_CONCURRENCY } from '../waitOptions';
import { forEachItem } from './perItem';
import { readTaskId, taskIdProperty } from './taskId';

export const getStatusProperties: INodeProperties[] = [taskIdProperty(['getStatus'])];

/** One status query per item: status, progress, fail_reason. */
export async function executeGetStatus(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await forEachItem(this, DEFAULT_CONCURRENCY, async (itemIndex, gate) => {
		const status = await getTaskStatus(this, readTaskId(this, itemIndex), itemIndex, gate);
		return { json: { ...status }, pairedItem: { item: itemIndex } };
	});
}
