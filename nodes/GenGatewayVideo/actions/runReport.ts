import type { IDataObject } from 'n8n-workflow';

/**
 * What one Generate run paid for, so that no accepted task_id vanishes when the run fails. Without Continue On Fail,
 * n8n keeps only the error the node throws (the other items' output is dropped): that error then names every task the
 * run submitted, its item, status and whether its video was downloaded, and how to collect it. The first failure also
 * stops the run from submitting more paid tasks and from waiting on the others (fail fast): the run fails anyway.
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
	private readonly skipped = new Set<number>();
	/** The first item failure of a run that stops at it (no Continue On Fail). */
	failure?: { itemIndex: number; error: unknown };

	constructor(private readonly failFast: boolean) {}

	/** True once the run is bound to fail: submit nothing more, stop waiting. */
	stopping(): boolean {
		return this.failure !== undefined;
	}

	submitted(item: number, taskId: string): void {
		this.tasks.set(item, { item, task_id: taskId, status: 'SUBMITTED', downloaded: false });
	}

	status(item: number, status: string): void {
		const task = this.tasks.get(item);
		if (task) task.status = status;
	}

	downloaded(item: number): void {
		const task = this.tasks.get(item);
		if (task) task.downloaded = true;
	}

	notSubmitted(item: number): void {
		this.skipped.add(item);
	}

	failed(itemIndex: number, error: unknown): void {
		if (this.failFast && !this.failure) this.failure = { itemIndex, error };
	}

	list(): SubmittedTask[] {
		return [...this.tasks.values()].sort((a, b) => a.item - b.item);
	}

	/** Items whose task was never submitted because the run was already failing. */
	skippedItems(): number[] {
		return [...this.skipped].sort((a, b) => a - b);
	}
}

function describeTask(task: SubmittedTask): string {
	const state = task.downloaded
		? 'video downloaded, but dropped with this failed run: use Download with this Task ID'
		: task.status === 'SUCCESS'
			? 'finished, video not downloaded: use Download with this Task ID'
			: task.status === 'FAILURE'
				? 'failed at the service'
				: 'not finished when the run stopped: use Wait for Completion with this Task ID';
	return `item ${task.item}: task_id ${task.task_id} (${task.status}; ${state})`;
}

/**
 * Adds the run's tasks to the error n8n keeps: the ids in the message, the details and what to do in the description,
 * the list in its context (`submitted_tasks`).
 */
export function addRunReport(error: unknown, report: RunReport): unknown {
	const tasks = report.list();
	const skipped = report.skippedItems();
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
			`Paid tasks this run submitted (none is resubmitted; collect them instead of generating again, which would pay ` +
				`twice): ${tasks.map(describeTask).join('; ')}.`,
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
