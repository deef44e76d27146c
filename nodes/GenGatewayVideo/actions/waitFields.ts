import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { TaskOutput } from '../task/outcome';
import type { TaskWait } from '../task/taskWait';

/**
 * The waiting and download fields of Generate, Wait for Completion and Check: their node properties, and the readers
 * that turn them into the task layer's TaskWait and TaskOutput (limits: docs/service-interface.md §8).
 */

const MAX_WAIT_MINUTES = 30;
const DEFAULT_POLL_SECONDS = 5;
export const DEFAULT_CONCURRENCY = 5;

export function downloadProperties(operations: string[], extraShow: Record<string, boolean[]> = {}): INodeProperties[] {
	return [
		{
			displayName: 'Download Video',
			name: 'downloadVideo',
			type: 'boolean',
			default: true,
			description:
				'Whether to download the video into binary data at once on success (the temporary URL behind it may expire)',
			displayOptions: { show: { operation: operations, ...extraShow } },
		},
		{
			displayName: 'Put Output File in Field',
			name: 'binaryPropertyName',
			type: 'string',
			default: 'data',
			hint: 'The name of the output binary field to put the video in',
			displayOptions: { show: { operation: operations, downloadVideo: [true], ...extraShow } },
		},
	];
}

/** The Options collection of a waiting operation, with the given options in it. */
export function optionsCollection(
	operations: string[],
	options: INodeProperties[],
	extraShow: Record<string, boolean[]> = {},
): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { operation: operations, ...extraShow } },
		options,
	};
}

export const maxConcurrencyOption = (description: string): INodeProperties => ({
	displayName: 'Max Concurrency',
	name: 'maxConcurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: 50, numberPrecision: 0 },
	default: DEFAULT_CONCURRENCY,
	description,
});

export const maxWaitOption = (description: string): INodeProperties => ({
	displayName: 'Max Wait (Minutes)',
	name: 'maxWait',
	type: 'number',
	typeOptions: { minValue: 0.05, maxValue: MAX_WAIT_MINUTES, numberPrecision: 2 },
	default: MAX_WAIT_MINUTES,
	description,
});

export function waitOptionsProperty(
	operations: string[],
	extraShow: Record<string, boolean[]> = {},
	extraOptions: INodeProperties[] = [],
): INodeProperties {
	return optionsCollection(
		operations,
		[
			maxConcurrencyOption(
				'How many requests (submissions, status checks, downloads) run at the same time. All items wait in ' +
					'parallel; results keep the input order.',
			),
			maxWaitOption(
				'Give up waiting after this long (at most 30, the service limit). The task keeps running: resume it with ' +
					'Wait for Completion.',
			),
			{
				displayName: 'Poll Interval (Seconds)',
				name: 'pollInterval',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 300, numberPrecision: 1 },
				default: DEFAULT_POLL_SECONDS,
				description: 'Time between status checks; the service recommends 5 seconds and discourages faster polling',
			},
			...extraOptions,
		],
		extraShow,
	);
}

/** The node's Options of a waiting operation, read once per run. */
export interface WaitFields {
	pollIntervalMs: number;
	maxWaitMs: number;
	maxConcurrency: number;
}

function checkRange(
	ctx: IExecuteFunctions,
	label: string,
	value: unknown,
	min: number,
	max: number,
	itemIndex: number,
): number {
	const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	if (typeof number !== 'number' || !Number.isFinite(number) || number < min || number > max) {
		throw new NodeOperationError(
			ctx.getNode(),
			`${label}: ${JSON.stringify(value)} is not allowed; allowed: ${min}–${max}`,
			{
				itemIndex,
			},
		);
	}
	return number;
}

/** Read once per execution (from the first item): concurrency is a property of the whole run. */
export function readWaitFields(ctx: IExecuteFunctions, itemIndex = 0): WaitFields {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as Record<string, unknown>;
	const poll = checkRange(
		ctx,
		'Poll Interval (Seconds)',
		options.pollInterval ?? DEFAULT_POLL_SECONDS,
		1,
		300,
		itemIndex,
	);
	const wait = checkRange(
		ctx,
		'Max Wait (Minutes)',
		options.maxWait ?? MAX_WAIT_MINUTES,
		0.05,
		MAX_WAIT_MINUTES,
		itemIndex,
	);
	const lanes = checkRange(ctx, 'Max Concurrency', options.maxConcurrency ?? DEFAULT_CONCURRENCY, 1, 50, itemIndex);
	return { pollIntervalMs: poll * 1000, maxWaitMs: wait * 60_000, maxConcurrency: Math.floor(lanes) };
}

/** The one place a TaskWait is built: the run's Options and what one item adds (its lane, start, hooks). */
export function taskWait(fields: WaitFields, item: Omit<TaskWait, 'pollIntervalMs' | 'maxWaitMs'>): TaskWait {
	return { pollIntervalMs: fields.pollIntervalMs, maxWaitMs: fields.maxWaitMs, ...item };
}

/** Download Video and its field, as downloadProperties shows them, with the fields that lead the output item. */
export function readTaskOutput(ctx: IExecuteFunctions, itemIndex: number, details: IDataObject): TaskOutput {
	return {
		download: ctx.getNodeParameter('downloadVideo', itemIndex, true) as boolean,
		binaryPropertyName: ctx.getNodeParameter('binaryPropertyName', itemIndex, 'data') as string,
		details,
	};
}
