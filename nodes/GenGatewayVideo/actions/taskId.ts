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
	return checkPathSegment(ctx, 'Task ID', taskId, itemIndex);
}

function decoded(text: string): string {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
}

/**
 * A task id or artifact key goes into the request path: `.`, `..` (also percent-encoded), a slash, a backslash or a
 * control character would change which address is asked (`/v1/tasks/..` is `/v1/`), so it is refused before any
 * request.
 */
export function checkPathSegment(ctx: IExecuteFunctions, label: string, value: string, itemIndex: number): string {
	const plain = decoded(value);
	// eslint-disable-next-line no-control-regex
	if (plain === '.' || plain === '..' || /[/\\\u0000-\u001f\u007f]/.test(plain)) {
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
