import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Gate } from '../../shared/concurrency';
import { isOutcomeUnknownError } from '../../shared/errors';
import { completeTask } from '../completion';
import { modelFieldProperties, modelProperty } from '../fields';
import { readVideoParameters } from '../parameters';
import { buildVideoRequest, InvalidVideoRequest } from '../request';
import type { VideoRequestBody } from '../request';
import { forget, forgetScope, ledgerKey, recall, remember } from '../submissionLedger';
import type { LedgerScope } from '../submissionLedger';
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

/** Submits once per item and execution; a retry of the node resumes the accepted task instead of paying again. */
async function submitOnce(
	ctx: IExecuteFunctions,
	scope: LedgerScope,
	body: VideoRequestBody,
	itemIndex: number,
	gate: Gate,
): Promise<{ taskId: string; resumed: boolean }> {
	const key = ledgerKey(scope, itemIndex, body);
	const earlier = recall(key);
	if (earlier?.state === 'accepted') return { taskId: earlier.taskId, resumed: true };
	if (earlier) {
		throw new NodeOperationError(
			ctx.getNode(),
			'Not resubmitted: an earlier try of this item in this execution had an unknown outcome, so the service may already have the task',
			{
				itemIndex,
				description:
					'Check with the service whether a task was created for this prompt before you submit again; resubmitting blindly can pay for the same video twice.',
			},
		);
	}
	remember(key, { state: 'sending', at: Date.now() });
	try {
		const taskId = await submitTask(ctx, body, itemIndex, gate);
		remember(key, { state: 'accepted', taskId, at: Date.now() });
		return { taskId, resumed: false };
	} catch (error) {
		if (isOutcomeUnknownError(error)) remember(key, { state: 'unknown', reason: (error as Error).message, at: Date.now() });
		else forget(key);
		throw error;
	}
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
	const scope: LedgerScope = { executionId: this.getExecutionId() ?? 'manual', nodeName: this.getNode().name };

	const out = await forEachItem(this, settings.maxConcurrency, async (itemIndex, gate) => {
		const entry = prepared[itemIndex];
		if ('error' in entry) throw entry.error;
		const details: IDataObject = { model: entry.body.model };
		try {
			const submittedAt = new Date().toISOString();
			const { taskId, resumed } = await submitOnce(this, scope, entry.body, itemIndex, gate);
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
	// n8n's Retry On Fail also re-runs a node whose output holds error items (Continue On Fail): keep the memory then,
	// so the retry resumes accepted tasks; it expires on its own. A clean finish needs no memory.
	if (!out.some((item) => item.json.error !== undefined)) forgetScope(scope);
	return out;
}
