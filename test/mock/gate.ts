/** Applies the service-wide limits (limits.ts) to one authorized /v1 request, before any route or fault rule. */
import { cut, note, sendJson, sendError, type RequestContext } from './context';
import { emptyStats, keyLabel, limiterKindOf, type KeyStats } from './limits';
import { isRelayPath, sendRelayRateLimited } from './newApi';

/** 'answered' when the request was refused (429) or faulted; otherwise the key's stats to count submissions into. */
export function applyLimits(ctx: RequestContext, key: string): KeyStats | 'answered' {
	const { state } = ctx;
	const label = keyLabel(key);
	let stats = state.keyStats.get(label);
	if (!stats) state.keyStats.set(label, (stats = emptyStats()));
	stats.requests++;

	// new-api's rate limiter guards its relay group (chat, responses, images), not /v1/tasks or /v1/models.
	const newApi = ctx.personality === 'new-api';
	const guarded = !newApi || isRelayPath(ctx.url.pathname);
	const retryAfter = guarded ? state.limiter.take(label, state.limits.rateLimit, Date.now(), limiterKindOf(state.limits, label)) : undefined;
	if (retryAfter !== undefined && newApi) {
		stats.limited++;
		sendRelayRateLimited(ctx);
		return 'answered';
	}
	if (retryAfter !== undefined) {
		stats.limited++;
		note(ctx, 'rate-limited');
		const message = `Rate limit reached for requests: limit ${state.limits.rateLimit} per second. Please try again in ${retryAfter}s.`;
		ctx.entry.error = message;
		sendJson(
			ctx,
			429,
			{
				error: {
					message,
					type: 'requests',
					param: null,
					code: 'rate_limit_exceeded',
				},
			},
			{ 'Retry-After': String(retryAfter) },
		);
		return 'answered';
	}

	const faultRate = state.limits.readFaultRate;
	if (ctx.req.method === 'GET' && faultRate > 0 && Math.random() < faultRate) {
		stats.readFaults++;
		if (Math.random() < 0.5) {
			note(ctx, 'read-fault:503');
			sendError(ctx, 503, 'upstream temporarily unavailable (injected read fault)');
		} else {
			cut(ctx, 'read-fault:cut');
		}
		return 'answered';
	}
	return stats;
}
