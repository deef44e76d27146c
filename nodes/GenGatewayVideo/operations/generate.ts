import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Gate } from '../../shared/concurrency';
import { guardScope, releaseSubmissions, submitOnce } from '../../shared/submissionGuard';
import type { GuardScope } from '../../shared/submissionGuard';
import { completeTask } from '../completion';
import { modelFieldProperties, modelProperty } from '../fields';
import { readVideoParameters } from '../parameters';
import { buildVideoRequest, InvalidVideoRequest } from '../request';
import type { VideoRequestBody } from '../request';
import { submitTask } from '../task';
import { downloadProperties, readWaitSettings, waitOptionsProperty } from '../waitOptions';
import { forEachItem } from './perItem';

const OPERATION = 'generate';

export const generateProperties: INodeProperties[] = [
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
			'Whether to wait until the video is ready (polling its status). Off: output the task_id at once and resume later with "Wait for Completion".',
		displayOptions: { show: { operation: [OPERATION] } },
	},
	...downloadProperties([OPERATION], { waitForCompletion: [true] }),
	waitOptionsProperty([OPERATION]),
];

type Prepared = { body: VideoRequestBody } | { error: Error };

/** Validates one item's parameters into a request body; nothing is sent for an invalid item. */
function prepare(ctx: IExecuteFunctions, itemIndex: number): Prepared {
	try {
		const { model, input } = readVideoParameters(ctx, itemIndex);
		return { body: buildVideoRequest(model, input) };
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

export async function executeGenerate(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const count = this.getInputData().length;
	const prepared = Array.from({ length: count }, (_, itemIndex) => prepare(this, itemIndex));
	// Validate every item before paying for any: without Continue On Fail, one invalid item stops the run up front.
	const firstInvalid = prepared.find((entry): entry is { error: Error } => 'error' in entry);
	if (firstInvalid && !this.continueOnFail()) throw firstInvalid.error;

	const settings = readWaitSettings(this);
	const scope = guardScope(this);

	const out = await forEachItem(this, settings.maxConcurrency, async (itemIndex, gate) => {
		const entry = prepared[itemIndex];
		if ('error' in entry) throw entry.error;
		const details: IDataObject = { model: entry.body.model };
		try {
			const { taskId, resumed, acceptedAt } = await submitGuarded(this, scope, entry.body, itemIndex, gate);
			const submittedAt = new Date(acceptedAt).toISOString();
			Object.assign(details, { task_id: taskId, submitted_at: submittedAt, resumed, request: entry.body });
			if (!(this.getNodeParameter('waitForCompletion', itemIndex, true) as boolean)) {
				return { json: { ...details, status: 'SUBMITTED' }, pairedItem: { item: itemIndex } };
			}
			return await completeTask(this, taskId, {
				...settings,
				itemIndex,
				gate,
				download: this.getNodeParameter('downloadVideo', itemIndex, true) as boolean,
				binaryPropertyName: this.getNodeParameter('binaryPropertyName', itemIndex, 'data') as string,
				details,
			});
		} catch (error) {
			throw withTaskContext(error, details);
		}
	});
	releaseSubmissions(this, out, scope);
	return out;
}
