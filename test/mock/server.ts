/**
 * The mock Gen Gateway service: a real HTTP server (node:http only). This file does routing; every other job
 * lives in its own file (auth, faults, video, chat, responses, images, admin, media, tasks).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import { handleAdmin } from './admin';
import { accessOf, FORBIDDEN_MESSAGE, NO_VIDEO_MESSAGE, presentedKey, type KeyPermissions } from './auth';
import { chatCompletions } from './chat';
import { sendError, sendJson, type RequestContext } from './context';
import { applyFault, pickFault } from './faults';
import { MEDIA_FETCH_AGENT } from './fetchMedia';
import { imageFile, imageGenerations } from './images';
import { modelList } from './models';
import { requestPersonality, sendAuthError, sendInvalidUrl, stampRequestId } from './newApi';
import { newApiSubmit } from './newApiTasks';
import { responses } from './responses';
import { applyLimits } from './gate';
import type { MockLimits } from './limits';
import { createState } from './state';
import type { LogEntry, MockState, Personality, TaskScript } from './types';
import { artifactContent, getTask, listArtifacts, submitTask, temporaryMedia } from './video';

export type { FaultRule, LogEntry, MockState, Personality, TaskScript } from './types';

export const DEFAULT_API_KEY = 'mock-key-0123456789';

export interface MockServiceOptions {
	/** 0 (default) = a random free port. */
	port?: number;
	/** Default 127.0.0.1. */
	host?: string;
	apiKey?: string;
	/** More keys; `{video: false}` gets 403 on the video endpoints only. */
	secondaryKeys?: Record<string, KeyPermissions>;
	/** Task script defaults (also what `reset` returns to). */
	defaults?: Partial<TaskScript>;
	/** Rate limit, task duration range, read faults (also what `reset` returns to); see limits.ts. */
	limits?: Partial<MockLimits>;
	/** 'new-api': answer as the real gateway new-api does (newApi.ts; README.md). Default 'default'. */
	personality?: Personality;
}

export interface MockService {
	/** http://127.0.0.1:PORT, no trailing slash. */
	url: string;
	apiKey: string;
	close(): Promise<void>;
	state: MockState;
}

type Handler = (ctx: RequestContext, ...params: string[]) => void | Promise<void>;

interface Route {
	method: string;
	pattern: RegExp;
	handler: Handler;
	/** No key needed (CDN-like media links). */
	public?: boolean;
	/** Needs a key with video permission. */
	video?: boolean;
	/** Only in this personality (another personality goes on to the next route). */
	only?: Personality;
	/** In new-api, a signed `?access=` stands for the key (the handler checks it). */
	capability?: boolean;
}

const CONTENT = /^\/v1\/tasks\/([^/]+)\/artifacts\/([^/]+)\/content$/;

const ROUTES: Route[] = [
	{ method: 'GET', pattern: /^\/v1\/models$/, handler: (ctx) => sendJson(ctx, 200, modelList(ctx.personality)) },
	{ method: 'POST', pattern: /^\/v1\/chat\/completions$/, handler: chatCompletions },
	{ method: 'POST', pattern: /^\/v1\/responses$/, handler: responses },
	{ method: 'POST', pattern: /^\/v1\/images\/generations$/, handler: imageGenerations },
	{ method: 'POST', pattern: /^\/v1\/tasks\/([^/]+)$/, handler: newApiSubmit, video: true, only: 'new-api' },
	{ method: 'POST', pattern: /^\/v1\/tasks\/vendor$/, handler: submitTask, video: true },
	{ method: 'GET', pattern: /^\/v1\/tasks\/([^/]+)$/, handler: getTask, video: true },
	{ method: 'GET', pattern: /^\/v1\/tasks\/([^/]+)\/artifacts$/, handler: listArtifacts, video: true },
	{ method: 'GET', pattern: CONTENT, handler: artifactContent, video: true, capability: true },
	{ method: 'HEAD', pattern: CONTENT, handler: artifactContent, video: true, capability: true, only: 'new-api' },
	{ method: 'GET', pattern: /^\/files\/images\/([^/]+)\.png$/, handler: imageFile, public: true },
	{ method: 'GET', pattern: /^\/tmp-media\/([^/]+)\.mp4$/, handler: temporaryMedia, public: true },
];

const MAX_BODY = 20 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<string | undefined> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		size += (chunk as Buffer).length;
		if (size > MAX_BODY) throw new Error('body too large');
		chunks.push(chunk as Buffer);
	}
	return size ? Buffer.concat(chunks).toString('utf8') : undefined;
}

function parseJson(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
	if (text === undefined || text.trim() === '') return { ok: true, value: undefined };
	try {
		return { ok: true, value: JSON.parse(text) };
	} catch {
		return { ok: false };
	}
}

export async function startMockService(opts: MockServiceOptions = {}): Promise<MockService> {
	const apiKey = opts.apiKey ?? DEFAULT_API_KEY;
	const secondaryKeys = opts.secondaryKeys ?? {};
	const state = createState(opts.defaults, opts.limits, opts.personality ?? 'default');

	async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', 'http://mock.invalid');
		const method = req.method ?? 'GET';
		const text = await readBody(req);
		const parsed = parseJson(text);

		if (url.pathname.startsWith('/__mock/')) {
			return handleAdmin(state, req, res, url.pathname, parsed.ok ? parsed.value : undefined);
		}

		const entry: LogEntry = {
			seq: ++state.seq,
			time: new Date().toISOString(),
			method,
			path: url.pathname + url.search,
			status: 0,
			authorized: false,
			...(req.headers['user-agent'] === MEDIA_FETCH_AGENT ? { mediaFetch: true } : {}),
			...(text !== undefined ? { body: parsed.ok ? parsed.value : text } : {}),
		};
		state.log.push(entry);
		res.on('close', () => {
			entry.status = res.headersSent ? res.statusCode : 0;
		});
		const ctx: RequestContext = {
			req,
			res,
			url,
			state,
			entry,
			body: parsed.ok ? parsed.value : undefined,
			jsonInvalid: !parsed.ok,
			personality: requestPersonality(state, url.pathname, text),
		};
		stampRequestId(ctx);
		const newApi = ctx.personality === 'new-api';
		// new-api: 401 for a wrong or missing key, 403 (same shape) for a key shut out of the route.
		const refuseKey = () =>
			newApi ? sendAuthError(ctx, 401, 'Invalid token') : sendError(ctx, 403, FORBIDDEN_MESSAGE);

		const access = accessOf(req, apiKey, secondaryKeys);
		entry.authorized = access.authorized;
		// The service-wide limits (429 past the rate, read faults) act first, on authorized /v1 requests.
		const key = access.authorized ? presentedKey(req) : undefined;
		const stats = key !== undefined && url.pathname.startsWith('/v1/') ? applyLimits(ctx, key) : undefined;
		if (stats === 'answered') return;

		const fault = pickFault(state, method, url.pathname);
		if (fault && (await applyFault(ctx, fault))) return;

		for (const route of ROUTES) {
			const m = route.pattern.exec(url.pathname);
			if (!m || route.method !== method || (route.only && route.only !== ctx.personality)) continue;
			const byCapability = newApi && route.capability === true && url.searchParams.has('access');
			if (!route.public && !byCapability) {
				if (!access.authorized) return refuseKey();
				if (route.video && !access.video) {
					return newApi ? sendAuthError(ctx, 403, NO_VIDEO_MESSAGE) : sendError(ctx, 403, NO_VIDEO_MESSAGE);
				}
			}
			// new-api's submission tells a body that is not JSON from a bad one itself (415 / 400, newApiTasks.ts).
			if (!parsed.ok && !(newApi && route.handler === newApiSubmit)) {
				return sendError(ctx, 400, newApi ? 'invalid JSON body' : 'body: invalid JSON');
			}
			const before = state.submissions;
			await route.handler(ctx, ...m.slice(1).map(decodeURIComponent));
			if (stats) stats.submissions += state.submissions - before;
			return;
		}
		if (!access.authorized) return refuseKey();
		if (newApi) return sendInvalidUrl(ctx, method, url.pathname);
		sendError(ctx, 404, `unknown route ${method} ${url.pathname}`);
	}

	const server = createServer((req, res) => {
		handle(req, res).catch((err: Error) => {
			if (!res.headersSent) {
				const status = err.message === 'body too large' ? 413 : 500;
				res.writeHead(status, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `mock: ${err.message}` } }));
			} else {
				res.destroy();
			}
		});
	});
	const host = opts.host ?? '127.0.0.1';
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(opts.port ?? 0, host, () => resolve());
	});
	const { port } = server.address() as AddressInfo;
	state.baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

	return {
		url: state.baseUrl,
		apiKey,
		state,
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
