import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Operation } from '../../shared/run/router';
import { checkTaskOnce } from '../task/outcome';
import { videoRun } from './runPolicy';
import { readTaskId, taskIdProperty } from './taskId';
import {
	downloadProperties,
	maxConcurrencyOption,
	maxWaitOption,
	optionsCollection,
	readTaskOutput,
	readWaitFields,
	taskWait,
} from './waitFields';
import type { WaitFields } from './waitFields';

/**
 * The durable wait: Generate (Wait for Completion off) → n8n's Wait node (65 s or more, so n8n parks the execution in
 * its database as `waiting`) → Check, with Check's "Still Running" output wired back to the Wait node. Between checks
 * no process holds the task, and a restart of n8n resumes the wait; the task id and submission time travel on items.
 */

const OPERATION = 'check';

/** Output 0 ends the item (the video, or an error item under Continue On Fail); output 1 goes back to the Wait node. */
export const DONE_OUTPUT = 0;
export const STILL_RUNNING_OUTPUT = 1;

export const properties: INodeProperties[] = [
	{ ...taskIdProperty([OPERATION]), default: '={{ $json.task_id }}' },
	{
		displayName: 'Submitted At',
		name: 'submittedAt',
		type: 'string',
		default: '={{ $json.submitted_at }}',
		description:
			'When the task was submitted (an ISO 8601 time, the submitted_at of Generate): Max Wait counts from it. Empty: ' +
			'from the first check of the task in this execution.',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	...downloadProperties([OPERATION]),
	optionsCollection(
		[OPERATION],
		[
			maxConcurrencyOption(
				'How many requests (status checks, downloads) run at the same time; results keep the input order',
			),
			maxWaitOption(
				'Counted from Submitted At: a task still running after this long fails the item instead of going round ' +
					'again (at most 30, the service limit)',
			),
		],
	),
];

/** Submitted At as epoch ms; empty means "first seen by this node in this execution" (kept in the node's context). */
function readSince(ctx: IExecuteFunctions, itemIndex: number, taskId: string): number {
	const value = ctx.getNodeParameter('submittedAt', itemIndex, '') as unknown;
	if (value === undefined || value === null || value === '') {
		// The node context is saved with a waiting execution, so this survives the Wait node and a restart.
		const seen = ((ctx.getContext('node').firstChecked as IDataObject | undefined) ??= {});
		const first = seen[taskId];
		if (typeof first === 'number') return first;
		const now = Date.now();
		seen[taskId] = now;
		return now;
	}
	const since = typeof value === 'number' ? value : Date.parse(String(value));
	if (!Number.isFinite(since)) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Submitted At: ${JSON.stringify(String(value)).slice(0, 80)} is not a date`,
			{
				itemIndex,
				description: "Use the submitted_at of Generate's output (an ISO 8601 time). Nothing was sent.",
			},
		);
	}
	return since;
}

/** The item that goes round again: everything it came with, plus the last status seen. */
function stillRunningItem(
	input: INodeExecutionData,
	itemIndex: number,
	taskId: string,
	since: number,
	status: { status: string; progress?: string },
	waitedMs: number,
): INodeExecutionData {
	const json: IDataObject = {
		...input.json,
		task_id: taskId,
		submitted_at: new Date(since).toISOString(),
		status: status.status,
	};
	delete json.progress;
	if (status.progress) json.progress = status.progress;
	json.checks = (typeof input.json.checks === 'number' ? input.json.checks : 0) + 1;
	json.waited_seconds = Math.round(waitedMs / 100) / 10;
	return { json, pairedItem: { item: itemIndex } };
}

interface CheckRun {
	waitFields: WaitFields;
	inputs: INodeExecutionData[];
	/** The items that go round again (Still Running). */
	running: Set<INodeExecutionData>;
}

/** One status check per item, routed: finished (or failed under Continue On Fail) to Done; running to Still Running. */
export const operation: Operation<CheckRun> = {
	properties,
	prepare: (ctx) => ({ waitFields: readWaitFields(ctx), inputs: ctx.getInputData(), running: new Set() }),
	policy: (_ctx, { waitFields }) => videoRun(waitFields.maxConcurrency),
	run: async (ctx, itemIndex, lane, { waitFields, inputs, running }) => {
		const taskId = readTaskId(ctx, itemIndex);
		const since = readSince(ctx, itemIndex, taskId);
		const input = inputs[itemIndex];
		// What Generate put on the item (model, request…) leads the finished item, without the last check's status.
		const details: IDataObject = { ...input.json };
		for (const key of ['status', 'progress', 'checks', 'waited_seconds']) delete details[key];
		const { checks } = input.json;
		const outcome = await checkTaskOnce(
			ctx,
			taskId,
			taskWait(waitFields, { ...lane, since }),
			readTaskOutput(ctx, itemIndex, {
				...details,
				task_id: taskId,
				submitted_at: new Date(since).toISOString(),
			}),
		);
		if ('done' in outcome) {
			outcome.done.json.checks = (typeof checks === 'number' ? checks : 0) + 1;
			delete outcome.done.json.polls;
			return outcome.done;
		}
		const item = stillRunningItem(input, itemIndex, taskId, since, outcome.running, outcome.waitedMs);
		running.add(item);
		return item;
	},
	route: (items, { running }) => {
		const outputs: INodeExecutionData[][] = [[], []];
		for (const item of items) outputs[running.has(item) ? STILL_RUNNING_OUTPUT : DONE_OUTPUT].push(item);
		return outputs;
	},
};
