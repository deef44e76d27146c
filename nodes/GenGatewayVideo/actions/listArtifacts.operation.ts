import type { INodeProperties } from 'n8n-workflow';

import { asNodeError } from '../../shared/transport/errors';
import { listArtifacts } from '../task/client';
import { notFinishedError } from '../task/notFinished';
import { taskOperation } from './runPolicy';
import { taskIdProperty } from './taskId';

export const properties: INodeProperties[] = [taskIdProperty(['listArtifacts'])];

const isNotReady = (error: unknown) => String((error as { httpCode?: unknown }).httpCode) === '409';

/**
 * The artifacts of a finished task, as one item per task with the list in `artifacts`. An empty list (or a 409) for a
 * task still running or failed is that task's state, said plainly (task/notFinished.ts).
 */
export const operation = taskOperation(properties, async (ctx, taskId, lane) => {
	const { itemIndex } = lane;
	const explain = async () => await notFinishedError(ctx, taskId, 'List Artifacts', lane);
	const artifacts = await listArtifacts(ctx, taskId, lane).catch(async (error: unknown) => {
		throw (isNotReady(error) ? await explain() : undefined) ?? asNodeError(ctx, error, itemIndex);
	});
	if (artifacts.length === 0) {
		const error = await explain();
		if (error) throw error;
	}
	return { json: { task_id: taskId, artifacts }, pairedItem: { item: itemIndex } };
});
