import type { INodeProperties } from 'n8n-workflow';

import { getTaskStatus } from '../task/client';
import { taskOperation } from './runPolicy';
import { taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['getStatus'])];

/** One status query per item: status, progress, fail_reason. */
export const operation = taskOperation(properties, async (ctx, taskId, lane) => ({
	json: { ...(await getTaskStatus(ctx, taskId, lane)) },
	pairedItem: { item: lane.itemIndex },
}));
