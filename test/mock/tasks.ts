/** The video task state machine: a task's status is a pure function of its script and the time since submission. */
import { randomBytes } from 'crypto';
import { startMediaFetches } from './fetchMedia';
import { drawTaskTimings } from './limits';
import { artifactSha256 } from './media';
import { newApiTaskId } from './newApi';
import { scriptFor } from './taskScript';
import type { MockState, Personality, TaskRecord } from './types';

export type TaskStatus = 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';

export interface TaskPhase {
	status: TaskStatus;
	/** 0–99 while IN_PROGRESS. */
	progress?: number;
}

export function createTask(
	state: MockState,
	model: string,
	prompt: string,
	body: Record<string, unknown>,
	personality: Personality = 'default',
): TaskRecord {
	const id = personality === 'new-api' ? newApiTaskId() : `task_${randomBytes(12).toString('hex')}`;
	const task: TaskRecord = {
		id,
		model,
		prompt,
		body,
		createdAtMs: Date.now(),
		// A duration range (MOCK_TASK_SECONDS) replaces the script's timings; prompt markers still win.
		script: scriptFor(
			state.limits.taskSeconds ? { ...state.script, ...drawTaskTimings(state.limits.taskSeconds) } : state.script,
			prompt,
		),
		mediaToken: randomBytes(16).toString('hex'),
		mediaSeed: id,
		personality,
		fetchedMedia: [],
	};
	state.tasks.set(id, task);
	state.submissions++;
	// Accepted first, then its loopback frames/references are read (as new-api's plugins fetch after accepting).
	startMediaFetches(task, state.limits);
	return task;
}

/**
 * When the run ends (SUCCESS or FAILURE); undefined for tasks that never finish. A failed media fetch ends it when
 * the fetch failed; pending fetches hold it until they settle (so `fetchedMedia` is complete before SUCCESS).
 */
export function finishedAtMs(task: TaskRecord): number | undefined {
	const fetches = task.mediaFetch;
	if (fetches?.failure) return fetches.failure.atMs;
	if (task.script.outcome === 'never') return undefined;
	const scripted = task.createdAtMs + task.script.queuedMs + task.script.runMs;
	if (!fetches) return scripted;
	return fetches.settledAtMs === undefined ? undefined : Math.max(scripted, fetches.settledAtMs);
}

/** The fail_reason of a FAILURE: the media fetch's, or the script's. */
export const failReasonOf = (task: TaskRecord): string => task.mediaFetch?.failure?.reason ?? task.script.failReason;

export function phaseOf(task: TaskRecord, now = Date.now()): TaskPhase {
	const { queuedMs, runMs, outcome } = task.script;
	const end = finishedAtMs(task);
	if (end !== undefined && now >= end) {
		return { status: outcome === 'success' && !task.mediaFetch?.failure ? 'SUCCESS' : 'FAILURE' };
	}
	const elapsed = now - task.createdAtMs;
	if (elapsed < queuedMs) return { status: 'QUEUED' };
	const running = elapsed - queuedMs;
	const share = runMs > 0 ? running / runMs : 1;
	return { status: 'IN_PROGRESS', progress: Math.min(99, Math.floor(share * 100)) };
}

/** The public view of a task (GET /v1/tasks/:id). */
export function taskView(task: TaskRecord, now = Date.now()): Record<string, unknown> {
	const phase = phaseOf(task, now);
	return {
		task_id: task.id,
		status: phase.status,
		...(phase.status === 'IN_PROGRESS' ? { progress: `${phase.progress}%` } : {}),
		...(phase.status === 'FAILURE' ? { fail_reason: failReasonOf(task) } : {}),
		model: task.model,
		created_at: Math.floor(task.createdAtMs / 1000),
	};
}

/** new-api's stored statuses (model/task.go); UNKNOWN is never written by its current poller, nor by the mock. */
export type NewApiStatus = 'NOT_START' | 'SUBMITTED' | 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';

/**
 * The same clock in new-api's steps: the queued time split in three (NOT_START 0%, SUBMITTED 10%, QUEUED 20%), then
 * IN_PROGRESS from 30% (to 99% at most), then SUCCESS or FAILURE at 100%.
 */
export function newApiPhaseOf(task: TaskRecord, now = Date.now()): { status: NewApiStatus; progress: string } {
	const phase = phaseOf(task, now);
	if (phase.status === 'QUEUED') {
		const step = Math.min(2, Math.floor((3 * (now - task.createdAtMs)) / Math.max(1, task.script.queuedMs)));
		return [
			{ status: 'NOT_START' as const, progress: '0%' },
			{ status: 'SUBMITTED' as const, progress: '10%' },
			{ status: 'QUEUED' as const, progress: '20%' },
		][step];
	}
	if (phase.status === 'IN_PROGRESS') {
		return { status: 'IN_PROGRESS', progress: `${30 + Math.floor(((phase.progress ?? 0) * 69) / 99)}%` };
	}
	return { status: phase.status, progress: '100%' };
}

/** new-api's flat task record (GET /v1/tasks/:id): `fail_reason` "" and `finished_at` 0 until the end. */
export function newApiTaskView(task: TaskRecord, now = Date.now()): Record<string, unknown> {
	const { status, progress } = newApiPhaseOf(task, now);
	const finished = status === 'SUCCESS' || status === 'FAILURE';
	return {
		task_id: task.id,
		platform: 'vendor',
		status,
		progress,
		fail_reason: status === 'FAILURE' ? failReasonOf(task) : '',
		created_at: Math.floor(task.createdAtMs / 1000),
		finished_at: finished ? Math.floor((finishedAtMs(task) ?? now) / 1000) : 0,
		...(task.script.providerData ? { data: providerRecord(task, status) } : {}),
	};
}

const PROVIDER_WORDS: Record<NewApiStatus, string> = {
	NOT_START: 'pending',
	SUBMITTED: 'pending',
	QUEUED: 'queued',
	IN_PROGRESS: 'processing',
	SUCCESS: 'succeeded',
	FAILURE: 'failed',
};

/** A provider's own record as some new-api plugins pass it on: its words and numbers, the id rewritten to ours. */
function providerRecord(task: TaskRecord, status: NewApiStatus): Record<string, unknown> {
	return { id: task.id, object: 'video', status: PROVIDER_WORDS[status], model: task.model, seconds: '5' };
}

export function mediaPath(task: TaskRecord): string {
	return `/tmp-media/${task.mediaToken}.mp4`;
}

/** The temporary media URL expires `urlTtlMs` after SUCCESS. */
export function mediaExpiresAtMs(task: TaskRecord): number | undefined {
	const done = finishedAtMs(task);
	return done === undefined ? undefined : done + task.script.urlTtlMs;
}

export function findTaskByToken(state: MockState, token: string): TaskRecord | undefined {
	for (const task of state.tasks.values()) if (task.mediaToken === token) return task;
	return undefined;
}

/** sha256 of the artifact bytes this task serves (computed once from the generator, then cached). */
export async function taskSha256(task: TaskRecord): Promise<string> {
	task.sha256 ??= await artifactSha256(task.mediaSeed, task.script.artifactBytes);
	return task.sha256;
}

/** The internal record exposed on GET /__mock/tasks/:id. */
export async function taskRecordView(task: TaskRecord): Promise<Record<string, unknown>> {
	const now = Date.now();
	return {
		id: task.id,
		personality: task.personality,
		model: task.model,
		prompt: task.prompt,
		body: task.body,
		script: task.script,
		createdAt: new Date(task.createdAtMs).toISOString(),
		phase: phaseOf(task, now),
		mediaPath: mediaPath(task),
		mediaExpiresAt: (() => {
			const at = mediaExpiresAtMs(task);
			return at === undefined ? null : new Date(at).toISOString();
		})(),
		artifactBytes: task.script.artifactBytes,
		sha256: await taskSha256(task),
		fetchedMedia: task.fetchedMedia,
	};
}
