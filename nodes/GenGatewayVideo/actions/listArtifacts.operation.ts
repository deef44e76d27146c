import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { asNodeError } from '../../shared/transport/errors';
import { listArtifacts } from '../task/client';
import { notFinishedError } from '../task/notFinished';
import { forEachTask } from './runPolicy';
import { taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['listArtifacts'])];

const isNotReady = (error: unknown) => String((error as { httpCode?: unknown }).httpCode) === '409';

/**
 * The artifacts of a finished task, as one item per task with the list in `artifacts`. An empty list (or a 409) for a
 * task still running or failed is that task's state, said plainly (task/notFinished.ts).
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await forEachTask(this, async (taskId, lane) => {
		const { itemIndex } = lane;
		const explain = async () => await notFinishedError(this, taskId, 'List Artifacts', lane);
		const artifacts = await listArtifacts(this, taskId, lane).catch(async (error: unknown) => {
			throw (isNotReady(error) ? await explain() : undefined) ?? asNodeError(this, error, itemIndex);
		});
		if (artifacts.length === 0) {
			const error = await explain();
			if (error) throw error;
		}
		return { json: { task_id: taskId, artifacts }, pairedItem: { item: itemIndex } };
	});
}
