/**
 * The task routes in new-api's words (its task plugin API: controller/task_plugin.go, controller/task.go): submit,
 * status, artifacts. Same task records and clock as the default personality (tasks.ts), other answers.
 */
import { note, sendError, sendJson, type RequestContext } from './context';
import { isVideoModel } from './models';
import { contentUrl, sendFlatError } from './newApi';
import { newApiContent } from './newApiContent';
import { createTask, newApiTaskView, phaseOf } from './tasks';
import type { TaskRecord } from './types';
import { validateVendorBody } from './videoValidation';

/**
 * POST /v1/tasks/:plugin. Refused before submitting (wrapped `{"error":{message, type}}`): 404 unknown plugin, 415 not
 * JSON, 400 invalid JSON or a model the plugin does not serve. Refused by the submission (flat `{code, message,
 * data:null}`): every other validation problem. Accepted: `{id, task_id, status:'queued', model, created_at}`.
 */
export function newApiSubmit(ctx: RequestContext, plugin: string): void {
	if (plugin !== 'vendor') {
		note(ctx, 'rejected');
		return sendError(ctx, 404, `task plugin '${plugin}' not found`);
	}
	const type = String(ctx.req.headers['content-type'] ?? '');
	if (!/^application\/json\b/i.test(type)) {
		note(ctx, 'rejected');
		return sendError(ctx, 415, 'Content-Type must be application/json');
	}
	if (ctx.jsonInvalid || !ctx.body || typeof ctx.body !== 'object' || Array.isArray(ctx.body)) {
		note(ctx, 'rejected');
		return sendError(ctx, 400, ctx.jsonInvalid ? 'invalid JSON body' : 'invalid request body: expected a JSON object');
	}
	const model = (ctx.body as Record<string, unknown>).model;
	if (typeof model !== 'string' || !isVideoModel(model)) {
		note(ctx, 'rejected');
		const name = typeof model === 'string' ? model : '';
		return sendError(ctx, 400, `model '${name}' is not supported by task plugin 'vendor'`);
	}
	const check = validateVendorBody(ctx.body);
	if (!check.ok) {
		note(ctx, 'rejected');
		return sendFlatError(ctx, 400, 'invalid_request', check.message);
	}
	const task = createTask(ctx.state, model, check.request.prompt, ctx.body as Record<string, unknown>, 'new-api');
	ctx.entry.taskId = task.id;
	note(ctx, 'task-created');
	sendJson(ctx, 200, {
		id: task.id,
		task_id: task.id,
		status: 'queued',
		model,
		created_at: Math.floor(task.createdAtMs / 1000),
	});
}

const NO_STORE = { 'Cache-Control': 'private, no-store' };

function taskOr404(ctx: RequestContext, id: string): TaskRecord | undefined {
	ctx.entry.taskId = id;
	const task = ctx.state.tasks.get(id);
	if (!task) sendError(ctx, 404, 'Task not found', NO_STORE);
	return task;
}

export function newApiGetTask(ctx: RequestContext, id: string): void {
	const task = taskOr404(ctx, id);
	if (task) sendJson(ctx, 200, newApiTaskView(task), NO_STORE);
}

/** 200 with `artifacts: []` until SUCCESS (and after FAILURE); then the video with its absolute content URL. */
export function newApiListArtifacts(ctx: RequestContext, id: string): void {
	const task = taskOr404(ctx, id);
	if (!task) return;
	const done = phaseOf(task).status === 'SUCCESS';
	const artifacts = done
		? [{ key: 'video', type: 'video', mime_type: 'video/mp4', content_url: contentUrl(ctx.state, task) }]
		: [];
	sendJson(ctx, 200, { task_id: task.id, artifacts }, NO_STORE);
}

export async function newApiArtifactContent(ctx: RequestContext, id: string, key: string): Promise<void> {
	ctx.entry.taskId = id;
	await newApiContent(ctx, ctx.state.tasks.get(id), key);
}
