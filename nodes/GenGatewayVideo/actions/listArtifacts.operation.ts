import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runItems } from '../../shared/run/runItems';
import { listArtifacts } from '../task/client';
import { videoRun } from './runPolicy';
import { readTaskId, taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['listArtifacts'])];

/** The artifacts of a finished task, as one item per task with the list in `artifacts`. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return [
		await runItems(
			this,
			async (itemIndex, gate) => {
				const taskId = readTaskId(this, itemIndex);
				const artifacts = await listArtifacts(this, taskId, itemIndex, gate);
				return {
					json: { task_id: taskId, artifacts },
					pairedItem: { item: itemIndex },
				};
			},
			videoRun(),
		),
	];
}
