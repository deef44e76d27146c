import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { LEDGER_ITEM_ONLY } from '../../shared/ledger/ledgerErrors';
import { asNodeError } from '../../shared/transport/errors';
import type { Lane } from '../../shared/transport/lane';
import { meaningOf } from '../task/status';
import type { TaskWait } from '../task/taskWait';

/**
 * What one Generate run paid for, so that no accepted task_id vanishes when the run fails. Without Continue On Fail,
 * n8n keeps only the error the node throws (the other items' output is dropped): that error then names every task the
 * run submitted, its item, status and whether its video was downloaded, and how to collect it. The first failure also
 * stops the run from submitting more paid tasks and from waiting on the others (fail fast): the run fails anyway.
 * Generate hands it each item's events through the hooks below; nothing else reads or writes it.
 */

interface SubmittedTask {
	item: number;
	task_id: string;
	/** The last status seen ('SUBMITTED' before the first poll). */
	status: string;
	downloaded: boolean;
}

export class RunReport {
	private readonly tasks = new Map<number, SubmittedTask>();
	/** Items whose task was never submitted because the run was already failing. */
	private readonly skipped = new Set<number>();
	/** The first item failure of a run that stops at it (no Continue On Fail). */
	private failure?: { itemIndex: number; error: unknown };
	private readonly failFast: boolean;

	constructor(private readonly ctx: IExecuteFunctions) {
		this.failFast = !ctx.continueOnFail();
	}

	/**
	 * The item's lane for its paid submission. Checked when the submission's turn comes: a run that is already failing
	 * submits nothing more; a failed submission is recorded before the lane's gate lets the next one in.
	 */
	submissionLane(lane: Lane): Lane {
		const { itemIndex } = lane;
		const gate: Lane['gate'] = async (call) =>
			await lane.gate(async () => {
				if (this.stopping()) {
					this.skipped.add(itemIndex);
					throw notSubmittedError(this.ctx, itemIndex);
				}
				return await call().catch((error: unknown) => {
					this.failed(itemIndex, error);
					throw asNodeError(this.ctx, error, itemIndex);
				});
			});
		return { itemIndex, gate };
	}

	/** The service accepted the item's task: from now on it is paid for. */
	paid(itemIndex: number, taskId: string): void {
		this.tasks.set(itemIndex, { item: itemIndex, task_id: taskId, status: 'SUBMITTED', downloaded: false });
	}

	/** The hooks of the item's wait: every status seen is kept; the wait stops once the run is bound to fail. */
	waitHooks(itemIndex: number): Pick<TaskWait, 'onStatus' | 'stop'> {
		return {
			onStatus: (status) => {
				const task = this.tasks.get(itemIndex);
				if (task) task.status = status.status;
			},
			stop: () => this.stopping(),
		};
	}

	/** The item finished: whether its video came with it. */
	finished(itemIndex: number, item: INodeExecutionData): INodeExecutionData {
		const task = this.tasks.get(itemIndex);
		if (task && item.binary) task.downloaded = true;
		return item;
	}

	/** The item failed; the first failure of a run without Continue On Fail is the one n8n will keep. */
	failed(itemIndex: number, error: unknown): void {
		// A task ledger's refusal of one item (unknown outcome, held by another run) does not stop the others.
		if ((error as { context?: Record<string, unknown> })?.context?.[LEDGER_ITEM_ONLY] === true) return;
		if (this.failFast && !this.failure) this.failure = { itemIndex, error };
	}

	/** The error the run ends with: the first item failure, naming every task this run paid for. */
	finalError(error: unknown): unknown {
		if (this.ctx.getExecutionCancelSignal()?.aborted) return asNodeError(this.ctx, error);
		return asNodeError(this.ctx, this.addTo(this.failure?.error ?? error));
	}

	/** True once the run is bound to fail: submit nothing more, stop waiting. */
	private stopping(): boolean {
		return this.failure !== undefined;
	}

	/**
	 * Adds the run's tasks to the error n8n keeps: the ids in the message, the details and what to do in the
	 * description, the list in its context (`submitted_tasks`).
	 */
	private addTo(error: unknown): unknown {
		const tasks = [...this.tasks.values()].sort((a, b) => a.item - b.item);
		const skipped = [...this.skipped].sort((a, b) => a - b);
		if (tasks.length === 0 && skipped.length === 0) return error;
		const target = error as { message: string; description?: string | null; context?: IDataObject };
		if (typeof target !== 'object' || target === null) return error;
		// The failing item's own task is named already (and is the whole story when it is the only one).
		if (skipped.length === 0 && tasks.every((task) => String(target.message).includes(task.task_id))) return error;
		const lines: string[] = [];
		if (tasks.length > 0) {
			const listed = tasks.map((t) => `item ${t.item} ${t.task_id}`).join(', ');
			target.message = `${target.message} [This run submitted ${tasks.length} paid task(s): ${listed}]`;
			lines.push(
				`Paid tasks this run submitted (none is resubmitted; collect them instead of generating again, which would ` +
					`pay twice): ${tasks.map(describeTask).join('; ')}.`,
				'Collect them with the operation "Wait for Completion" (waits if needed, then downloads) or "Download", with ' +
					'Task ID set to each task_id above.',
			);
		}
		if (skipped.length > 0) {
			lines.push(`Not submitted (nothing paid) because the run was already failing: item(s) ${skipped.join(', ')}.`);
		}
		target.description = [target.description, ...lines].filter(Boolean).join('\n\n');
		if (target.context && typeof target.context === 'object') {
			target.context.submitted_tasks = tasks as unknown as IDataObject[];
			if (skipped.length > 0) target.context.not_submitted_items = skipped;
		}
		return error;
	}
}

function notSubmittedError(ctx: IExecuteFunctions, itemIndex: number): NodeOperationError {
	const message = 'Not submitted: another item failed and this run stops at the first failure';
	return new NodeOperationError(ctx.getNode(), message, {
		itemIndex,
		description:
			'Nothing was sent or paid for this item. Fix the failing item (or turn on Continue On Fail) and run again.',
	});
}

function describeTask(task: SubmittedTask): string {
	const state = task.downloaded
		? 'video downloaded, but dropped with this failed run: use Download with this Task ID'
		: meaningOf(task.status) === 'success'
			? 'finished, video not downloaded: use Download with this Task ID'
			: meaningOf(task.status) === 'failure'
				? 'failed at the service'
				: 'not finished when the run stopped: use Wait for Completion with this Task ID';
	return `item ${task.item}: task_id ${task.task_id} (${task.status}; ${state})`;
}
