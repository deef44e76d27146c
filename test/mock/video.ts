/** The video task endpoints (sections 2–4 of the contract) and the temporary media URL they proxy. */
import { note, sendError, sendJson, sendStream, type RequestContext } from './context';
import { artifactStream, ChunkPool, chunkSizeFor } from './media';
import { newApiArtifactContent, newApiGetTask, newApiListArtifacts } from './newApiTasks';
import { createTask, findTaskByToken, mediaExpiresAtMs, mediaPath, phaseOf, taskView } from './tasks';
import type { TaskRecord } from './types';
import { validateVendorBody } from './videoValidation';

export function submitTask(ctx: RequestContext): void {
	const check = validateVendorBody(ctx.body);
	if (!check.ok) {
		note(ctx, 'rejected');
		return sendError(ctx, 400, check.message);
	}
	const task = createTask(ctx.state, check.model.id, check.request.prompt, ctx.body as Record<string, unknown>);
	ctx.entry.taskId = task.id;
	note(ctx, 'task-created');
	sendJson(ctx, 200, { task_id: task.id });
}

function taskOr404(ctx: RequestContext, id: string): TaskRecord | undefined {
	ctx.entry.taskId = id;
	const task = ctx.state.tasks.get(id);
	if (!task) sendError(ctx, 404, `task_id: no task '${id}'`);
	return task;
}

export function getTask(ctx: RequestContext, id: string): void {
	if (ctx.personality === 'new-api') return newApiGetTask(ctx, id);
	const task = taskOr404(ctx, id);
	if (task) sendJson(ctx, 200, taskView(task));
}

/** Artifacts exist only after SUCCESS; answers 409 (with the current status) before that or after FAILURE. */
function succeeded(ctx: RequestContext, task: TaskRecord): boolean {
	const { status } = phaseOf(task);
	if (status === 'SUCCESS') return true;
	sendError(ctx, 409, `task ${task.id} is ${status}; artifacts are available only after SUCCESS`);
	return false;
}

export function listArtifacts(ctx: RequestContext, id: string): void {
	if (ctx.personality === 'new-api') return newApiListArtifacts(ctx, id);
	const task = taskOr404(ctx, id);
	if (!task || !succeeded(ctx, task)) return;
	const artifacts = [{ key: 'video', type: 'video', mime_type: 'video/mp4' }];
	const shape = task.script.artifactListShape;
	sendJson(ctx, 200, shape === 'bare' ? artifacts : shape === 'artifacts' ? { artifacts } : { data: artifacts });
}

/** Streams the artifact (throttled if the script says so); a full download caches its sha256 on the task. */
async function serveMedia(ctx: RequestContext, task: TaskRecord): Promise<void> {
	const expiresAt = mediaExpiresAtMs(task);
	if (expiresAt !== undefined && Date.now() >= expiresAt) {
		note(ctx, 'expired');
		return sendError(
			ctx,
			410,
			`the temporary video URL expired at ${new Date(expiresAt).toISOString()}; download promptly after SUCCESS`,
		);
	}
	const size = task.script.artifactBytes;
	const pool = new ChunkPool(chunkSizeFor(task.script.bytesPerSecond));
	await sendStream(
		ctx,
		200,
		{
			'Content-Type': 'video/mp4',
			'Content-Length': String(size),
			'Content-Disposition': `attachment; filename="${task.id}.mp4"`,
		},
		artifactStream(task.mediaSeed, size, pool, task.script.bytesPerSecond),
		(sha) => {
			task.sha256 = sha;
		},
		pool.release,
	);
}

export async function artifactContent(ctx: RequestContext, id: string, key: string): Promise<void> {
	if (ctx.personality === 'new-api') return newApiArtifactContent(ctx, id, key);
	const task = taskOr404(ctx, id);
	if (!task) return;
	if (key !== 'video') return sendError(ctx, 404, `artifact_key: no artifact '${key}' for task ${id}`);
	if (!succeeded(ctx, task)) return;
	// Proxied from the temporary URL: same bytes, same expiry.
	note(ctx, `proxied:${mediaPath(task)}`);
	await serveMedia(ctx, task);
}

/** GET /tmp-media/:token.mp4 — the temporary URL itself (no auth, like a signed CDN link). */
export async function temporaryMedia(ctx: RequestContext, token: string): Promise<void> {
	const task = findTaskByToken(ctx.state, token);
	if (!task || phaseOf(task).status !== 'SUCCESS') return sendError(ctx, 404, 'no such media');
	ctx.entry.taskId = task.id;
	await serveMedia(ctx, task);
}
