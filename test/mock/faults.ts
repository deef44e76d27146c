/** Fault injection: rules picked per request (method + path regex, skip/times counters) and how each kind acts. */
import { setTimeout as wait } from 'timers/promises';
import { z } from 'zod';
import { cut, note, sendError, type RequestContext } from './context';
import { sendNewApiFault } from './newApi';
import type { FaultRule, MockState } from './types';

const FAULT_KINDS = [
	'status',
	'cut-after-accept',
	'cut-before',
	'cut-mid-body',
	'malformed-json',
	'html',
	'empty',
	'delay',
	'hang',
	'sse-cut',
] as const;

const RuleSchema = z
	.object({
		method: z.string().optional(),
		path: z.string().refine((p) => {
			try {
				new RegExp(p);
				return true;
			} catch {
				return false;
			}
		}, 'must be a valid regex source'),
		times: z.number().int().min(-1).optional(),
		skip: z.number().int().min(0).optional(),
		kind: z.enum(FAULT_KINDS),
		status: z.number().int().min(100).max(599).optional(),
		retryAfter: z.number().min(0).optional(),
		delayMs: z.number().min(0).optional(),
		afterBytes: z.number().int().min(0).optional(),
	})
	.strict();

export const FaultRulesBody = z.object({ rules: z.array(RuleSchema) }).strict();

/** Replaces the rule set; returns an error message for an invalid body. */
export function setFaultRules(state: MockState, body: unknown): string | undefined {
	const parsed = FaultRulesBody.safeParse(body);
	if (!parsed.success) {
		const issue = parsed.error.issues[0];
		return `${issue.path.join('.') || 'body'}: ${issue.message}`;
	}
	state.faults = parsed.data.rules.map((rule) => ({ ...rule, fired: 0, seen: 0 }));
	return undefined;
}

/**
 * The first rule that fires for this request. Every matching rule counts the request (so `skip: 1` means
 * "from the 2nd matching request on", whatever other rules did with the 1st).
 */
export function pickFault(state: MockState, method: string, path: string): FaultRule | undefined {
	let chosen: (typeof state.faults)[number] | undefined;
	for (const rule of state.faults) {
		if (rule.method && rule.method.toUpperCase() !== method.toUpperCase()) continue;
		if (!new RegExp(rule.path).test(path)) continue;
		rule.seen++;
		const times = rule.times ?? 1;
		const eligible = rule.seen > (rule.skip ?? 0) && (times === -1 || rule.fired < times);
		if (eligible && !chosen) chosen = rule;
	}
	if (chosen) chosen.fired++;
	return chosen;
}

const HTML_PAGE =
	'<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>' +
	'<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>';

/**
 * Acts on a fault before normal handling. Returns true when the request is finished (answered or cut);
 * false when handling must go on (delay, and the kinds that act during/after handling).
 */
export async function applyFault(ctx: RequestContext, rule: FaultRule): Promise<boolean> {
	note(ctx, `fault:${rule.kind}`);
	const { res } = ctx;
	switch (rule.kind) {
		case 'status': {
			const status = rule.status ?? 503;
			if (ctx.personality === 'new-api') {
				sendNewApiFault(ctx, status, rule.retryAfter);
				return true;
			}
			const headers: Record<string, string> =
				rule.retryAfter !== undefined ? { 'Retry-After': String(rule.retryAfter) } : {};
			sendError(ctx, status, `injected fault: HTTP ${status}`, headers);
			return true;
		}
		case 'cut-before':
			cut(ctx);
			return true;
		case 'malformed-json': {
			const body = '{"id": "resp_trunc", "task_id": "task_tr';
			res.writeHead(rule.status ?? 200, { 'Content-Type': 'application/json', 'Content-Length': String(body.length) });
			res.end(body);
			return true;
		}
		case 'html':
			res.writeHead(rule.status ?? 502, { 'Content-Type': 'text/html; charset=utf-8' });
			res.end(HTML_PAGE);
			return true;
		case 'empty':
			res.writeHead(rule.status ?? 200, { 'Content-Type': 'application/json', 'Content-Length': '0' });
			res.end();
			return true;
		case 'hang':
			// Never answer; the socket is destroyed when the client gives up or the mock closes.
			return true;
		case 'delay':
			await wait(rule.delayMs ?? 1000);
			return res.destroyed;
		default:
			// cut-after-accept, cut-mid-body, sse-cut: the answer helpers act on ctx.fault.
			ctx.fault = rule;
			return false;
	}
}
