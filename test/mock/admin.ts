/** The admin API under /__mock/ (no auth, never logged, never faulted): what tests use to drive and inspect the mock. */
import type { IncomingMessage, ServerResponse } from 'http';
import { setFaultRules } from './faults';
import { mergeLimits } from './limits';
import { resetState } from './state';
import { sanitizeScript } from './taskScript';
import { taskRecordView } from './tasks';
import type { MockState } from './types';

function json(res: ServerResponse, status: number, payload: unknown): void {
	const text = JSON.stringify(payload);
	res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
	res.end(text);
}

const fail = (res: ServerResponse, status: number, message: string) => json(res, status, { error: { message } });

export async function handleAdmin(
	state: MockState,
	req: IncomingMessage,
	res: ServerResponse,
	pathname: string,
	body: unknown,
): Promise<void> {
	const route = `${req.method} ${pathname.replace(/^\/__mock/, '')}`;
	const task = /^GET \/tasks\/([^/]+)$/.exec(route);
	if (task) {
		const record = state.tasks.get(decodeURIComponent(task[1]));
		return record ? json(res, 200, await taskRecordView(record)) : fail(res, 404, `no task '${task[1]}'`);
	}
	const image = /^GET \/images\/([^/]+)$/.exec(route);
	if (image) {
		const img = state.images.get(decodeURIComponent(image[1]));
		if (!img) return fail(res, 404, `no image '${image[1]}'`);
		const { bytes, ...rest } = img;
		return json(res, 200, { ...rest, byteLength: bytes.length });
	}
	switch (route) {
		case 'GET /log':
			return json(res, 200, state.log);
		case 'POST /reset':
			resetState(state);
			return json(res, 200, { ok: true });
		case 'GET /faults':
			return json(res, 200, { rules: state.faults });
		case 'POST /faults': {
			const problem = setFaultRules(state, body);
			return problem ? fail(res, 400, problem) : json(res, 200, { rules: state.faults });
		}
		case 'GET /task-script':
			return json(res, 200, state.script);
		case 'POST /task-script':
			state.script = { ...state.script, ...sanitizeScript(body) };
			return json(res, 200, state.script);
		case 'GET /limits':
			return json(res, 200, state.limits);
		case 'POST /limits': {
			const merged = mergeLimits(state.limits, body);
			if (typeof merged === 'string') return fail(res, 400, merged);
			state.limits = merged;
			return json(res, 200, state.limits);
		}
		case 'GET /stats': {
			const totals = { requests: 0, limited: 0, submissions: 0, readFaults: 0 };
			for (const k of state.keyStats.values()) {
				totals.requests += k.requests;
				totals.limited += k.limited;
				totals.submissions += k.submissions;
				totals.readFaults += k.readFaults;
			}
			return json(res, 200, { keys: Object.fromEntries(state.keyStats), totals, limits: state.limits });
		}
		case 'GET /state':
			return json(res, 200, {
				personality: state.personality,
				submissions: state.submissions,
				tasks: [...state.tasks.keys()],
				images: [...state.images.values()].map(({ id, sha256 }) => ({ id, sha256 })),
				script: state.script,
				faults: state.faults,
				limits: state.limits,
			});
		case 'GET /health': {
			const mem = process.memoryUsage();
			return json(res, 200, {
				pid: process.pid,
				rss: mem.rss,
				heapUsed: mem.heapUsed,
				maxRss: process.resourceUsage().maxRSS * 1024,
			});
		}
		default:
			return fail(res, 404, `unknown admin route ${req.method} ${pathname}`);
	}
}
