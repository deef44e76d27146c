import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

export const taskIdProperty = (operations: string[]): INodeProperties => ({
	displayName: 'Task ID',
	name: 'taskId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. task_a1b2c3',
	description: 'The task_id that Generate returned',
	// In the hint, not the description: n8n's lint wants every "json" in a description spelled JSON.
	hint: 'For example the expression {{ $json.task_id }} right after Generate',
	displayOptions: { show: { operation: operations } },
});

export function readTaskId(ctx: IExecuteFunctions, itemIndex: number): string {
	const value = ctx.getNodeParameter('taskId', itemIndex, '');
	const taskId = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
	if (taskId === '') {
		throw new NodeOperationError(ctx.getNode(), 'Task ID: is required (the task_id that Generate returned)', {
			itemIndex,
		});
	}
	return taskId;
}
