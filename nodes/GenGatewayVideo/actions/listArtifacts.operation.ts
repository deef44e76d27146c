import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { listArtifacts } from '../task/client';
import { forEachTask } from './runPolicy';
import { taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['listArtifacts'])];

/** The artifacts of a finished task, as one item per task with the list in `artifacts`. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await forEachTask(this, async (taskId, itemIndex, gate) => ({
		json: { task_id: taskId, artifacts: await listArtifacts(this, taskId, itemIndex, gate) },
		pairedItem: { item: itemIndex },
	}));
}
