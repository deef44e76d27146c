import { NodeOperationError } from 'n8n-workflow';
import type { INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Operation } from '../../shared/run/router';
import { recoverTasks } from '../../shared/ledger/recovery';
import { videoRun } from './runPolicy';

/**
 * After a crash: the paid tasks of a workflow's Task Ledger that no run delivered, one item each on Tasks (wire it
 * into Wait for Completion), and the submissions whose outcome is unknown on Unknown Outcome (never resubmitted).
 * It runs once, whatever its input (a Manual or Schedule Trigger).
 */

const OPERATION = 'recover';

export const properties: INodeProperties[] = [
	{
		displayName: 'Task Ledger (Data Table ID)',
		name: 'taskLedger',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 3Kx9LmQp2RtV7wYz',
		description: 'The Data Table that Generate records its tasks in (its Options → Task Ledger)',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	{
		displayName: 'Workflow ID',
		name: 'workflowId',
		type: 'string',
		required: true,
		default: '={{ $workflow.id }}',
		description: 'Whose tasks to recover: the ID of the workflow whose Generate node paid for them (default: this one)',
		displayOptions: { show: { operation: [OPERATION] } },
	},
];

export const operation: Operation<undefined> = {
	properties,
	policy: () => videoRun(),
	run: async (ctx, itemIndex) => {
		// Once per run: the first item lists everything; a run with many input items recovers nothing more.
		if (itemIndex > 0) return [];
		const tableId = String(ctx.getNodeParameter('taskLedger', 0, '')).trim();
		const workflowId = String(ctx.getNodeParameter('workflowId', 0, '')).trim();
		if (!tableId || !workflowId) {
			throw new NodeOperationError(ctx.getNode(), `${tableId ? 'Workflow ID' : 'Task Ledger'}: is required`, {
				itemIndex,
				description: 'Recover reads the Task Ledger that Generate writes (its Options → Task Ledger).',
			});
		}
		const { tasks, unknownOutcomes } = await recoverTasks(ctx, tableId, workflowId);
		const items = (list: typeof tasks, recovered: string): INodeExecutionData[] =>
			list.map((json) => ({ json: { ...json, recovered }, pairedItem: { item: 0 } }));
		return [...items(tasks, 'task'), ...items(unknownOutcomes, 'unknown_outcome')];
	},
	route: (items) => [
		// An error item (Continue On Fail) leaves by the first output, as in every operation.
		items.filter((item) => item.json.recovered !== 'unknown_outcome'),
		items.filter((item) => item.json.recovered === 'unknown_outcome'),
	],
};
