// Executions of a running n8n server, read through its REST API (the owner's session), for the e2e tests.
import { timed } from '../../timing/phases';
import { FRESH_CONNECTION, type N8nServer } from '../n8n';

/** n8n's REST API sends run data in the `flatted` format: every object and string is an index into one array. */
export function unflatten(text: string): any { // eslint-disable-line @typescript-eslint/no-explicit-any
	const table = JSON.parse(text) as unknown[];
	const done = new Map<number, unknown>();
	const revive = (index: number): unknown => {
		const value = table[index];
		if (typeof value !== 'object' || value === null) return value;
		if (done.has(index)) return done.get(index);
		const out: Record<string, unknown> = Array.isArray(value) ? ([] as unknown as Record<string, unknown>) : {};
		done.set(index, out);
		for (const [key, member] of Object.entries(value)) out[key] = typeof member === 'string' ? revive(Number(member)) : member;
		return out;
	};
	return revive(0);
}

export interface ExecutionSummary {
	id: string;
	status: string;
	mode?: string;
	/** When a parked (`waiting`) execution's Wait ends, ISO 8601; absent otherwise. */
	waitTill?: string;
}

/** The workflow's executions, newest first (status: new, running, waiting, success, error, crashed, canceled). */
export async function listExecutions(server: N8nServer, cookie: string, workflowId: string): Promise<ExecutionSummary[]> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const response = await server.rest('GET', `/rest/executions?filter=${filter}`, { cookie });
	if (response.status !== 200) throw new Error(`GET /rest/executions: ${response.status} ${JSON.stringify(response.body).slice(0, 500)}`);
	return (response.body.data.results as ExecutionSummary[]).map(({ id, status, mode, waitTill }) => ({
		id: String(id),
		status,
		mode,
		...(waitTill ? { waitTill: String(waitTill) } : {}),
	}));
}

/** One execution with its run data (IRunExecutionData: resultData.runData, resultData.error, ...). */
export async function readExecution(server: N8nServer, cookie: string, id: string): Promise<{ status: string; data: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
	const response = await server.rest('GET', `/rest/executions/${id}`, { cookie });
	if (response.status !== 200) throw new Error(`GET /rest/executions/${id}: ${response.status} ${JSON.stringify(response.body).slice(0, 500)}`);
	return { status: response.body.data.status, data: unflatten(response.body.data.data) };
}

/** Polls until `done` holds for the workflow's executions; throws with what was last seen after `timeoutMs`. */
export async function waitForExecutions(
	server: N8nServer,
	cookie: string,
	workflowId: string,
	done: (executions: ExecutionSummary[]) => boolean,
	timeoutMs: number,
): Promise<ExecutionSummary[]> {
	return await timed('wait', 'executions to reach a state', () => pollExecutions(server, cookie, workflowId, done, timeoutMs));
}

async function pollExecutions(
	server: N8nServer,
	cookie: string,
	workflowId: string,
	done: (executions: ExecutionSummary[]) => boolean,
	timeoutMs: number,
): Promise<ExecutionSummary[]> {
	const deadline = Date.now() + timeoutMs;
	let last: ExecutionSummary[] = [];
	while (Date.now() < deadline) {
		last = await listExecutions(server, cookie, workflowId);
		if (done(last)) return last;
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
	throw new Error(`executions did not reach the expected state in ${timeoutMs} ms; last seen: ${JSON.stringify(last)}`);
}

/** n8n registers production webhooks shortly after its REST API answers: wait with a CORS preflight (runs nothing). */
export async function waitForWebhook(server: N8nServer, webhookPath: string, timeoutMs = 120_000): Promise<void> {
	await timed('wait', 'webhook registration', () => pollWebhook(server, webhookPath, timeoutMs));
}

async function pollWebhook(server: N8nServer, webhookPath: string, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const preflight = await fetch(`${server.url}/webhook/${webhookPath}`, {
			method: 'OPTIONS',
			headers: { ...FRESH_CONNECTION, origin: server.url, 'access-control-request-method': 'POST' },
		});
		if (preflight.status === 204 && /\bPOST\b/.test(preflight.headers.get('access-control-allow-methods') ?? '')) return;
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
	throw new Error(`the production webhook /webhook/${webhookPath} was not registered in ${timeoutMs} ms`);
}
