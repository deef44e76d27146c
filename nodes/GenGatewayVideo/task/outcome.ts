import { NodeOperationError } from 'n8n-workflow';
import type { IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError } from '../../shared/transport/errors';
import { listArtifacts } from './client';
import { downloadArtifact } from './content';
import type { Artifact, TaskStatus } from './client';
import { pollTask } from './poll';
import { FAILURE, meaningOf } from './status';
import type { WaitResult } from './poll';
import type { TaskWait } from './taskWait';

/** What a wait ends in: the finished output item (artifacts listed, the video downloaded), or an error that says
 * how to resume the task. */

/** What the finished item holds besides the task's outcome. */
export interface TaskOutput {
	download: boolean;
	binaryPropertyName: string;
	/** Fields that lead the output JSON (task_id, model, submitted_at, the request…). */
	details: IDataObject;
}

function taskError(
	ctx: IExecuteFunctions,
	message: string,
	description: string,
	itemIndex: number,
	details: IDataObject,
): NodeOperationError {
	const error = new NodeOperationError(ctx.getNode(), message, { itemIndex, description });
	// n8n swaps a message that names a network code (ECONNREFUSED…) for its generic text, which drops the task id.
	error.message = message;
	Object.assign(error.context, details);
	return error;
}

function reportProgress(ctx: IExecuteFunctions, status: TaskStatus, last: { text?: string }): void {
	const text = `${status.status}${status.progress ? ` ${status.progress}` : ''}`;
	if (text === last.text) return;
	last.text = text;
	ctx.logger.debug(`Gen Gateway Video: task ${status.task_id} ${text}`);
	try {
		// Shown in the browser console during manual runs; a no-op elsewhere.
		ctx.sendMessageToUI(`Gen Gateway Video: task ${status.task_id} ${text}`);
	} catch {
		// Progress is a courtesy; never fail a paid task over it.
	}
}

function pickVideoArtifact(artifacts: Artifact[]): Artifact | undefined {
	return artifacts.find((artifact) => artifact.key === 'video');
}

/**
 * The advice of every error after the task was accepted while it may still finish: resume it instead of generating it
 * again. `tail` ends the sentence.
 */
function resumeAdvice(taskId: string, tail = ''): string {
	return (
		'The task was not resubmitted and may still finish. Resume it with the operation "Wait for Completion" and Task ' +
		`ID ${taskId}${tail}.`
	);
}

/**
 * A request of the waiting phase failed for good (retries spent, or an answer that cannot be read). The task was
 * accepted and may still finish: say so and how to resume, so that nobody pays for it again by re-running Generate.
 */
function lostTrack(
	ctx: IExecuteFunctions,
	error: unknown,
	what: string,
	taskId: string,
	itemIndex: number,
	details: IDataObject,
): unknown {
	if (ctx.getExecutionCancelSignal()?.aborted) return error;
	const { message, description } = error as { message: string; description?: string };
	return taskError(
		ctx,
		`Could not ${what} of video task ${taskId}: ${message}`,
		[description, resumeAdvice(taskId, '; generating it again would pay for it twice')].filter(Boolean).join(' '),
		itemIndex,
		details,
	);
}

/** Polls until the task ends (or, with `once`, asks once); a status request that fails for good says how to resume. */
async function awaitStatus(
	ctx: IExecuteFunctions,
	taskId: string,
	wait: TaskWait,
	output: TaskOutput,
	once: boolean,
): Promise<WaitResult> {
	const last: { text?: string } = {};
	return await pollTask(ctx, taskId, {
		...wait,
		onStatus: (status) => {
			reportProgress(ctx, status, last);
			wait.onStatus?.(status);
		},
		// One status check: a task still running comes back as `stopped` instead of being waited for.
		stop: once ? () => true : wait.stop,
	}).catch((error: unknown) => {
		throw lostTrack(ctx, error, 'check the status', taskId, wait.itemIndex, { ...output.details, task_id: taskId });
	});
}

export async function completeTask(
	ctx: IExecuteFunctions,
	taskId: string,
	wait: TaskWait,
	output: TaskOutput,
): Promise<INodeExecutionData> {
	return await finishTask(ctx, taskId, await awaitStatus(ctx, taskId, wait, output, false), wait, output);
}

/**
 * One status check (the durable wait's Check): the finished item as completeTask makes it (a failure, an
 * answer without a status or an exhausted Max Wait throw as there), or the status of a task still running.
 */
export async function checkTaskOnce(
	ctx: IExecuteFunctions,
	taskId: string,
	wait: TaskWait,
	output: TaskOutput,
): Promise<{ done: INodeExecutionData } | { running: TaskStatus; waitedMs: number }> {
	const result = await awaitStatus(ctx, taskId, wait, output, true);
	if (result.stopped) return { running: result.status, waitedMs: result.waitedMs };
	return { done: await finishTask(ctx, taskId, result, wait, output) };
}

/** A wait that ended without the video: the first row whose `when` holds is the error the item fails with. */
interface Ending {
	when: (result: WaitResult) => boolean;
	message: (taskId: string, result: WaitResult, wait: TaskWait) => string;
	description: (taskId: string, result: WaitResult) => string;
	/** Fields the error adds to the task's. */
	extra?: (result: WaitResult) => IDataObject;
}

const ENDINGS: readonly Ending[] = [
	{
		// The service gave up on the task: only a corrected request can succeed, so there is nothing to resume.
		when: ({ status }) => meaningOf(status.status) === 'failure',
		message: (taskId, { status }) => {
			const how = status.status === FAILURE ? 'failed' : `ended with status ${JSON.stringify(status.status)}`;
			return `Video task ${taskId} ${how}: ${status.fail_reason ?? 'no reason given'}`;
		},
		description: (_taskId, { status }) =>
			`The service reported ${status.status}. Correct the request (prompt, references, options) and submit it ` +
			'again; a failed task is never resubmitted automatically.',
		extra: ({ status }) => ({ fail_reason: status.fail_reason ?? null }),
	},
	{
		// An answer without any status: waiting would not make one appear.
		when: ({ unexpected }) => Boolean(unexpected),
		message: (taskId, { unexpected }) => `Video task ${taskId}: the service's status answer has ${unexpected}`,
		description: (taskId) =>
			`Polling stopped at once: an answer without a status does not say the task will finish (is the credential's ` +
			`base URL the service's?). The task was not resubmitted. "Get Status" with Task ID ${taskId} shows what the ` +
			`service says now; "Wait for Completion" resumes it.`,
	},
	{
		// Another item failed a run that stops at the first failure (RunReport).
		when: ({ stopped }) => Boolean(stopped),
		message: (taskId, { status }) =>
			`Stopped waiting for video task ${taskId} (last status ${status.status}): another item failed`,
		description: (taskId) => resumeAdvice(taskId),
	},
	{
		when: ({ timedOut }) => timedOut,
		message: (taskId, { status }, wait) =>
			`Video task ${taskId} did not finish within ${Math.round((wait.maxWaitMs / 60_000) * 100) / 100} minute(s) ` +
			`(last status ${status.status}${status.progress ? `, ${status.progress}` : ''})`,
		description: (taskId, { unlisted }) =>
			resumeAdvice(taskId, ", soon after it ends (the video's temporary URL may expire)") +
			(unlisted.length
				? ` The service reported ${unlisted.map((s) => JSON.stringify(s)).join(', ')}, which neither the ` +
					'service contract nor new-api lists; polling went on in case the task moves on.'
				: ''),
	},
];

/** The finished item, or the error of the first of ENDINGS that applies. */
async function finishTask(
	ctx: IExecuteFunctions,
	taskId: string,
	result: WaitResult,
	wait: TaskWait,
	output: TaskOutput,
): Promise<INodeExecutionData> {
	const { status } = result;
	const details: IDataObject = { ...output.details, task_id: taskId, status: status.status };
	if (status.progress) details.progress = status.progress;
	const ending = ENDINGS.find((row) => row.when(result));
	if (ending) {
		const [message, description] = [ending.message(taskId, result, wait), ending.description(taskId, result)];
		throw taskError(ctx, message, description, wait.itemIndex, { ...details, ...ending.extra?.(result) });
	}
	return await collectVideo(ctx, taskId, result, wait, output, details);
}

/** A task that succeeded: its artifacts listed and, with Download Video, the video downloaded at once. */
async function collectVideo(
	ctx: IExecuteFunctions,
	taskId: string,
	result: WaitResult,
	wait: TaskWait,
	output: TaskOutput,
	details: IDataObject,
): Promise<INodeExecutionData> {
	const { itemIndex } = wait;
	const finishedAt = new Date().toISOString();
	const artifacts = await listArtifacts(ctx, taskId, wait).catch((error: unknown) => {
		throw lostTrack(ctx, error, 'list the artifacts', taskId, itemIndex, details);
	});
	const json: IDataObject = {
		...details,
		finished_at: finishedAt,
		waited_seconds: Math.round(result.waitedMs / 100) / 10,
		polls: result.polls,
		artifacts,
	};
	if (!output.download) return { json, pairedItem: { item: itemIndex } };

	// A listing without `video` (or in a shape not recognised) still gets the contract's content path for key `video`,
	// as "Download" does: the task is paid for, so try before failing.
	const listed = pickVideoArtifact(artifacts);
	const binary: IBinaryKeyData = {};
	try {
		binary[output.binaryPropertyName] = await downloadArtifact(
			ctx,
			taskId,
			listed ?? { key: 'video' },
			wait,
		);
	} catch (error) {
		if (ctx.getExecutionCancelSignal()?.aborted) throw asNodeError(ctx, error, itemIndex);
		const { message, description } = error as { message: string; description?: string };
		if (!listed) {
			throw taskError(
				ctx,
				`Video task ${taskId} succeeded but lists no artifact with key "video", and the content of key "video" could ` +
					`not be fetched: ${message}`,
				`Artifacts listed: ${artifacts.map((artifact) => artifact.key).join(', ') || 'none recognised'}. Use "List ` +
					`Artifacts" / "Download" with another key.`,
				itemIndex,
				json,
			);
		}
		throw taskError(
			ctx,
			`Could not download artifact "video" of task ${taskId}: ${message}`,
			[
				description,
				'The temporary URL behind the video may have expired; it is fetched right after SUCCESS for that reason. Try ' +
					'"Download" with this Task ID; if it has expired, the video must be generated again.',
			]
				.filter(Boolean)
				.join(' '),
			itemIndex,
			json,
		);
	}
	return { json, binary, pairedItem: { item: itemIndex } };
}
