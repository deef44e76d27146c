/**
 * The new-api personality's wire: how QuantumNous/new-api (the gateway the service interface comes from) words its
 * answers, per ../shared/GATEWAY-REAL.md. Which requests speak it, its error shapes, request ids, the model list and
 * the signed `?access=` capability of content URLs. The task routes themselves are in newApiTasks.ts.
 */
import { createHmac, randomInt } from 'crypto';
import { note, sendBare, sendJson, type RequestContext } from './context';
import type { MockState, Personality, TaskRecord } from './types';

/** Per-request marker: a default-mode mock answers this task (or this chat) as new-api does. */
export const NEW_API_MARKER = /\[\[\s*new-api\s*\]\]/i;

const TASK_PATH = /^\/v1\/tasks\/([^/]+)(?:\/|$)/;

/**
 * The personality a request is answered in: the process's; or new-api when the raw body carries the marker (a video
 * prompt, a chat message) or the path names a task created in new-api mode.
 */
export function requestPersonality(state: MockState, pathname: string, rawBody: string | undefined): Personality {
	if (state.personality === 'new-api') return 'new-api';
	if (rawBody !== undefined && NEW_API_MARKER.test(rawBody)) return 'new-api';
	const task = TASK_PATH.exec(pathname);
	if (task && state.tasks.get(safeDecode(task[1]))?.personality === 'new-api') return 'new-api';
	return 'default';
}

function safeDecode(text: string): string {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function alnum(length: number): string {
	let out = '';
	for (let i = 0; i < length; i++) out += ALNUM[randomInt(ALNUM.length)];
	return out;
}

/** new-api's task ids: `task_` + 32 letters and digits. */
export const newApiTaskId = (): string => `task_${alnum(32)}`;

/** new-api's request id (`X-Oneapi-Request-Id`): a UTC time stamp to the second, then random characters. */
export function newRequestId(now = new Date()): string {
	return `${now.toISOString().replace(/\D/g, '').slice(0, 14)}${alnum(16)}`;
}

/**
 * The key check's refusal: 401 for a wrong or missing key, 403 for a banned user/group (here: a key without
 * video access on the task routes); the message carries the request id, as new-api's `abortWithOpenAiMessage` does.
 */
export function sendAuthError(ctx: RequestContext, status: 401 | 403, message: string): void {
	const requestId = String(ctx.res.getHeader('X-Oneapi-Request-Id') ?? newRequestId());
	const text = `${message} (request id: ${requestId})`;
	ctx.entry.error = text;
	sendJson(ctx, status, { error: { message: text, type: 'new_api_error', code: '' } });
}

/** A refusal by the task submission itself: the flat `{code, message, data: null}` with the real status. */
export function sendFlatError(ctx: RequestContext, status: number, code: string, message: string): void {
	ctx.entry.error = message;
	sendJson(ctx, status, { code, message, data: null });
}

/** The content route's errors: `type` and `code` both carry the code (artifact_not_ready, artifact_gone, …). */
export function sendArtifactError(
	ctx: RequestContext,
	status: number,
	code: string,
	message: string,
	headers: Record<string, string> = {},
): void {
	ctx.entry.error = message;
	sendJson(ctx, status, { error: { message, type: code, code } }, headers);
}

/** new-api's answer to an unknown route under /v1 (its RelayNotFound). */
export function sendInvalidUrl(ctx: RequestContext, method: string, pathname: string): void {
	const message = `Invalid URL (${method} ${pathname})`;
	ctx.entry.error = message;
	sendJson(ctx, 404, { error: { message, type: 'invalid_request_error', param: '', code: '' } });
}

const RELAY = /^\/v1\/(chat\/completions|responses|images\/generations)$/;

/** The relay group (chat, responses, images): the one new-api's in-memory model rate limiter guards. */
export const isRelayPath = (pathname: string): boolean => RELAY.test(pathname);

/** The message new-api rewrites an upstream 429 on a task submission to (some versions say it in Chinese). */
export const SATURATED_MESSAGE = '当前分组上游负载已饱和，请稍后再试';

const CONTENT_FAULT_CODES: Record<number, string> = {
	404: 'artifact_not_found',
	409: 'artifact_not_ready',
	410: 'artifact_gone',
	500: 'artifact_plugin_error',
	502: 'artifact_upstream_auth_failed',
	503: 'artifact_upstream_busy',
	504: 'artifact_upstream_timeout',
};

/**
 * A `status` fault in new-api's words for that route: on the relay a bare 429 (and `{"error":…}` otherwise), on a
 * submission the flat shape (a 429 rewritten), on content the artifact error shape, elsewhere the wrapped shape.
 */
export function sendNewApiFault(ctx: RequestContext, status: number, retryAfter?: number): void {
	const headers: Record<string, string> = retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {};
	const { pathname } = ctx.url;
	const method = ctx.req.method ?? 'GET';
	const message = `injected fault: HTTP ${status}`;
	ctx.entry.error = message;
	if (isRelayPath(pathname) && status === 429) return sendBare(ctx, 429, headers);
	if (method === 'POST' && /^\/v1\/tasks\/[^/]+$/.test(pathname)) {
		const flat = status === 429 ? SATURATED_MESSAGE : message;
		return sendJson(
			ctx,
			status,
			{ code: status === 429 ? 'rate_limit' : 'fail_to_fetch_task', message: flat, data: null },
			headers,
		);
	}
	if (/\/artifacts\/[^/]+\/content$/.test(pathname)) {
		const code = CONTENT_FAULT_CODES[status] ?? 'artifact_plugin_error';
		return sendArtifactError(ctx, status, code, message, headers);
	}
	sendJson(
		ctx,
		status,
		{ error: { message, type: status >= 500 ? 'new_api_error' : 'invalid_request_error' } },
		headers,
	);
}

/** The signed capability of a task's content URL (no key needed; any other value is refused as not found). */
export function accessToken(state: MockState, task: TaskRecord): string {
	return createHmac('sha256', state.accessSecret).update(`${task.id}:video`).digest('base64url');
}

/** The absolute content URL new-api lists for an artifact. */
export function contentUrl(state: MockState, task: TaskRecord): string {
	const path = `/v1/tasks/${encodeURIComponent(task.id)}/artifacts/video/content`;
	return `${state.baseUrl}${path}?access=${accessToken(state, task)}`;
}

/** Every response in new-api mode carries a request id, as new-api's RequestId middleware sets one. */
export function stampRequestId(ctx: RequestContext): void {
	if (ctx.personality === 'new-api') ctx.res.setHeader('X-Oneapi-Request-Id', newRequestId());
}

/** A bare 429 from the relay's rate limiter (logged like the default 429). */
export function sendRelayRateLimited(ctx: RequestContext): void {
	note(ctx, 'rate-limited');
	sendBare(ctx, 429);
}
