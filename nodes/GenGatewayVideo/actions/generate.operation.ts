import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runItems } from '../../shared/run/runItems';
import { guardScope, submitOnce } from '../../shared/run/submissionGuard';
import type { GuardScope } from '../../shared/run/submissionGuard';
import type { Lane } from '../../shared/transport/lane';
import { completeTask } from '../task/outcome';
import { modelFieldProperties, modelProperty } from '../model/fields';
import { inputSource, readVideoParameters } from '../model/parameters';
import type { InputSource } from '../model/parameters';
import { InvalidVideoRequest } from '../model/fieldParsers';
import { videoRequestBody } from '../model/requestBody';
import type { VideoRequestBody } from '../model/requestBody';
import { RunReport } from './runReport';
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
	lane: Lane,
): Promise<{ taskId: string; resumed: boolean; acceptedAt: number }> {
	const { value, resumed, acceptedAt } = await submitOnce(ctx, {
		scope,
		itemIndex: lane.itemIndex,
		request: body,
		what: 'POST /v1/tasks/vendor',
		noun: 'video',
		send: async () => await submitTask(ctx, body, lane),
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
	const report = new RunReport(this);

	return [
		await runItems(
			this,
			async (itemIndex, lane) => {
				const entry = prepared[itemIndex];
				if ('error' in entry) throw entry.error;
				const details: IDataObject = { model: entry.body.model };
				try {
					const submission = report.submissionLane(lane);
					const { taskId, resumed, acceptedAt } = await submitGuarded(this, scope, entry.body, submission);
					report.paid(itemIndex, taskId);
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
						...lane,
						// Max Wait is per task: a retry that resumes it waits only what is left of it.
						since: acceptedAt,
						...report.waitHooks(itemIndex),
					});
					const item = await completeTask(this, taskId, wait, readTaskOutput(this, itemIndex, details));
					return report.finished(itemIndex, item);
				} catch (error) {
					// An item not submitted because the run was failing is recorded as such by its gate.
					report.failed(itemIndex, error);
					throw withTaskContext(error, details);
				}
			},
			videoRun(waitFields.maxConcurrency),
		).catch((error: unknown) => {
			// The error n8n keeps is the first item failure, naming every task this run paid for.
			throw report.finalError(error);
		}),
	];
}
