import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { changesPath } from '../task/pathSegment';

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
	return checkPathSegment(ctx, 'Task ID', taskId, itemIndex);
}

/** A value that would change the request path (task/pathSegment.ts) is refused before any request. */
export function checkPathSegment(ctx: IExecuteFunctions, label: string, value: string, itemIndex: number): string {
	if (changesPath(value)) {
		throw new NodeOperationError(
			ctx.getNode(),
			`${label}: ${JSON.stringify(value.slice(0, 80))} cannot be used: it would change the request path`,
			{
				itemIndex,
				description:
					`Nothing was sent. Use the value the service returned (for a Task ID, the task_id of Generate's ` +
					`output).`,
			},
		);
	}
	return value;
}
