import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { networkError } from '../../shared/transport/errors';
import type { Lane } from '../../shared/transport/lane';
import { gatewayJson } from '../../shared/transport/transport';
import type { VideoRequestBody } from '../model/requestBody';
import { taskIdFrom } from './pathSegment';

/**
 * The one client of the video task endpoints (docs/service-interface.md §4.2): submit, status, artifacts (the content:
 * content.ts).
 * Each request goes in the item's lane: the transport takes its turn in the credential's pace, then the gate.
 */

export interface TaskStatus {
	task_id: string;
	/** Trimmed and upper-cased; what it means for a wait: status.ts. */
	status: string;
	progress?: string;
	fail_reason?: string;
}

export interface Artifact extends IDataObject {
	key: string;
	type?: string;
	mime_type?: string;
}

const isRecord = (value: unknown): value is IDataObject =>
	!!value && typeof value === 'object' && !Array.isArray(value);

/** An answer quoted in an error: JSON, at most 300 characters. */
const bounded = (value: unknown) => {
	const text = JSON.stringify(value) ?? String(value);
	return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} characters)` : text;
};

const taskPath = (taskId: string) => `/v1/tasks/${encodeURIComponent(taskId)}`;

/**
 * The paid call: sent once; only an explicit 429/502/503 answer is retried (the transport's rules). `body` is made
 * right before each attempt goes out (its signed URLs are issued then).
 */
export async function submitTask(
	ctx: IExecuteFunctions,
	body: () => VideoRequestBody,
	lane: Lane,
): Promise<string> {
	const { itemIndex } = lane;
	const answer = await gatewayJson<IDataObject>(ctx, {
		method: 'POST',
		path: '/v1/tasks/vendor',
		body,
		kind: 'submit',
		lane,
	});
	const data = isRecord(answer.data) ? answer.data : {};
	const taskId = [answer.task_id, answer.id, data.task_id, data.id].map(taskIdFrom).find((id) => id !== undefined);
	if (taskId === undefined) {
		// Accepted, but we cannot follow the task (no id, or one that would change the request path): as unknown as a
		// lost answer, never resent; what the service said goes into the error (redacted at the transport, bounded).
		throw networkError(ctx.getNode(), {
			code: 'NO_TASK_ID',
			method: 'POST',
			path: '/v1/tasks/vendor',
			itemIndex,
			outcomeUnknown: true,
			reason: `the service answered without a usable task_id: ${bounded(answer)}`,
		});
	}
	// In n8n's log at once: if the process dies before the execution is saved (a killed queue worker), the log is
	// where an operator finds the paid task to resume with Wait for Completion.
	ctx.logger.info(`Gen Gateway Video: task ${taskId} accepted (execution ${ctx.getExecutionId()}, item ${itemIndex})`);
	return taskId;
}


/** The documented top-level record wins; a `data` wrapper is only a fallback when the top level has no status. */
function statusRecord(body: IDataObject): IDataObject {
	if (typeof body.status === 'string') return body;
	if (isRecord(body.data) && typeof body.data.status === 'string') return body.data;
	return body;
}

function statusFromBody(taskId: string, body: IDataObject): TaskStatus {
	const record = statusRecord(body);
	const status: TaskStatus = {
		task_id: typeof record.task_id === 'string' ? record.task_id : taskId,
		status: typeof record.status === 'string' ? record.status.trim().toUpperCase() : 'UNKNOWN',
	};
	if (record.progress !== undefined && record.progress !== null) status.progress = String(record.progress);
	if (typeof record.fail_reason === 'string' && record.fail_reason !== '') status.fail_reason = record.fail_reason;
	return status;
}

/**
 * One status request: the status, and `unexpected` when the answer has no status at all (the polling stops at it). A
 * poll goes last in the pace, the oldest task's first (`since`: when it was submitted); `deadline` (the item's Max
 * Wait) ends waiting out 429s.
 */
export async function queryTask(
	ctx: IExecuteFunctions,
	taskId: string,
	lane: Lane,
	deadline?: number,
	since?: number,
): Promise<{ status: TaskStatus; unexpected?: string }> {
	const body = await gatewayJson<IDataObject>(ctx, {
		method: 'GET',
		path: taskPath(taskId),
		kind: 'read',
		lane,
		pace: 'poll',
		paceAge: since,
		deadline,
	});
	return { status: statusFromBody(taskId, body), unexpected: unexpectedStatus(body) };
}

export async function getTaskStatus(
	ctx: IExecuteFunctions,
	taskId: string,
	lane: Lane,
): Promise<TaskStatus> {
	return (await queryTask(ctx, taskId, lane)).status;
}

/** An answer without a status, for the error: which fields came instead (never their values). */
function unexpectedStatus(body: IDataObject): string | undefined {
	if (typeof statusRecord(body).status === 'string') return undefined;
	const fields = Object.keys(body).slice(0, 10).join(', ') || 'none';
	return `no "status" field (fields: ${fields})`;
}

/**
 * The artifact list: a bare array, or the first array among `artifacts`, `data`, `data.artifacts`, `data.data` (the
 * full shape is not part of the contract; a documented-looking `artifacts` wins over a `data` wrapper). Undefined
 * when no list is recognised.
 */
function findArtifactList(body: unknown): unknown[] | undefined {
	if (Array.isArray(body)) return body;
	if (!isRecord(body)) return undefined;
	const data = isRecord(body.data) ? body.data : undefined;
	for (const candidate of [body.artifacts, body.data, data?.artifacts, data?.data]) {
		if (Array.isArray(candidate)) return candidate;
	}
	return undefined;
}

function artifactsFromBody(body: unknown): Artifact[] {
	const list = findArtifactList(body);
	if (!list) return [];
	return list.filter(
		(entry): entry is Artifact =>
			!!entry && typeof entry === 'object' && typeof (entry as IDataObject).key === 'string',
	);
}

export async function listArtifacts(
	ctx: IExecuteFunctions,
	taskId: string,
	lane: Lane,
): Promise<Artifact[]> {
	const body = await gatewayJson<unknown>(ctx, {
		method: 'GET',
		path: `${taskPath(taskId)}/artifacts`,
		kind: 'read',
		lane,
	});
	return artifactsFromBody(body);
}
