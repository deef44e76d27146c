import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Gate } from '../../shared/run/concurrency';
import { asNodeError } from '../../shared/transport/errors';
import { runItems } from '../../shared/run/runItems';
import { guardScope, submitOnce } from '../../shared/run/submissionGuard';
import type { GuardScope } from '../../shared/run/submissionGuard';
import { completeTask } from '../task/outcome';
import { modelFieldProperties, modelProperty } from '../model/fields';
import { inputSource, readVideoParameters } from '../model/parameters';
import type { InputSource } from '../model/parameters';
import { InvalidVideoRequest } from '../model/fieldParsers';
import { videoRequestBody } from '../model/requestBody';
import type { VideoRequestBody } from '../model/requestBody';
import { addRunReport, RunReport } from './runReport';
import { submitTask } from '../task/client';
import { videoRun } from './runPolicy';
import { downloadProperties, readTaskOutput, readWaitFields, taskWait, waitOptionsProperty } from './waitFields';

const OPERATION = 'generate';

export const properties: INodeProperties[] = [
	modelProperty(OPERATION),
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		typeOptions: { rows: 4 },
		required: true,
		default: '',
		placeholder: 'e.g. A red fox running through fresh snow at sunrise, cinematic',
		description: 'What the video should show',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	...modelFieldProperties(OPERATION),
	{
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: true,
		description:
			'Whether to wait until the video is ready (polling its status). Off: output the task_id at once and resume later ' +
			'with "Wait for Completion".',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	...downloadProperties([OPERATION], { waitForCompletion: [true] }),
	waitOptionsProperty([OPERATION]),
];

type Prepared = { body: VideoRequestBody } | { error: Error };

/** Validates one item's parameters into a request body; nothing is sent for an invalid item. */
function prepare(ctx: IExecuteFunctions, itemIndex: number, source: InputSource): Prepared {
	try {
		const { model, input } = readVideoParameters(ctx, itemIndex, source);
		return { body: videoRequestBody(model, input) };
	} catch (error) {
		if (error instanceof InvalidVideoRequest) {
			return {
				error: new NodeOperationError(ctx.getNode(), `Invalid video request: ${error.message}`, {
					itemIndex,
					description: 'Nothing was sent to the service. The allowed values come from the model capability matrix.',
				}),
			};
		}
		return { error: error as Error };
	}
}

/** The paid call, through the shared guard: a retry of the node resumes the accepted task instead of paying again. */
async function submitGuarded(
	ctx: IExecuteFunctions,
	scope: GuardScope,
	body: VideoRequestBody,
	itemIndex: number,
	gate: Gate,
): Promise<{ taskId: string; resumed: boolean; acceptedAt: number }> {
	const { value, resumed, acceptedAt } = await submitOnce(ctx, {
		scope,
		itemIndex,
		request: body,
		what: 'POST /v1/tasks/vendor',
		noun: 'video',
		send: async () => await submitTask(ctx, body, itemIndex, gate),
	});
	return { taskId: value, resumed, acceptedAt };
}

/** Adds which model and task an error concerns, for the error item under Continue On Fail. */
function withTaskContext(error: unknown, details: IDataObject): unknown {
	const context = (error as { context?: IDataObject }).context;
	if (context && typeof context === 'object') {
		for (const [key, value] of Object.entries(details)) if (context[key] === undefined) context[key] = value;
	}
	return error;
}

/** Marks the error of an item whose task was never submitted because the run was already failing. */
const NOT_SUBMITTED = 'not_submitted';

function notSubmittedError(ctx: IExecuteFunctions, itemIndex: number): NodeOperationError {
	const error = new NodeOperationError(
		ctx.getNode(),
		'Not submitted: another item failed and this run stops at the first failure',
		{
			itemIndex,
			description:
				'Nothing was sent or paid for this item. Fix the failing item (or turn on Continue On Fail) and run again.',
		},
	);
	error.context[NOT_SUBMITTED] = true;
	return error;
}

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const count = this.getInputData().length;
	const source = inputSource(this);
	const prepared = Array.from({ length: count }, (_, itemIndex) => prepare(this, itemIndex, source));
	// Validate every item before paying for any: without Continue On Fail, one invalid item stops the run up front.
	const firstInvalid = prepared.find((entry): entry is { error: Error } => 'error' in entry);
	if (firstInvalid && !this.continueOnFail()) throw firstInvalid.error;

	const waitFields = readWaitFields(this);
	const scope = guardScope(this);
	// Without Continue On Fail the first failing item fails the run: stop paying and waiting then, and report every task.
	const report = new RunReport(!this.continueOnFail());

	return [
		await runItems(
			this,
			async (itemIndex, gate) => {
				const entry = prepared[itemIndex];
				if ('error' in entry) throw entry.error;
				const details: IDataObject = { model: entry.body.model };
				// Checked when the submission's turn comes: a run that is already failing submits nothing more.
				const submitGate: Gate = async (call) =>
					await gate(async () => {
						if (report.stopping()) throw notSubmittedError(this, itemIndex);
						// Recorded before the gate lets the next submission in.
						return await call().catch((error: unknown) => {
							report.failed(itemIndex, error);
							throw asNodeError(this, error, itemIndex);
						});
					});
				try {
					const { taskId, resumed, acceptedAt } = await submitGuarded(this, scope, entry.body, itemIndex, submitGate);
					report.submitted(itemIndex, taskId);
					const submittedAt = new Date(acceptedAt).toISOString();
					Object.assign(details, {
						task_id: taskId,
						submitted_at: submittedAt,
						resumed,
						request: entry.body,
					});
					if (!(this.getNodeParameter('waitForCompletion', itemIndex, true) as boolean)) {
						return {
							json: { ...details, status: 'SUBMITTED' },
							pairedItem: { item: itemIndex },
						};
					}
					const wait = taskWait(waitFields, {
						itemIndex,
						gate,
						// Max Wait is per task: a retry that resumes it waits only what is left of it.
						since: acceptedAt,
						onStatus: (status) => report.status(itemIndex, status.status),
						stop: () => report.stopping(),
					});
					const item = await completeTask(this, taskId, wait, readTaskOutput(this, itemIndex, details));
					if (item.binary) report.downloaded(itemIndex);
					return item;
				} catch (error) {
					if ((error as { context?: IDataObject }).context?.[NOT_SUBMITTED]) report.notSubmitted(itemIndex);
					else report.failed(itemIndex, error);
					throw withTaskContext(error, details);
				}
			},
			videoRun(waitFields.maxConcurrency),
		).catch((error: unknown) => {
			// The error n8n keeps is the first item failure, naming every task this run paid for.
			if (this.getExecutionCancelSignal()?.aborted) throw asNodeError(this, error);
			throw asNodeError(this, addRunReport(report.failure?.error ?? error, report));
		}),
	];
}
