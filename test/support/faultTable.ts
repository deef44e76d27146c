import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunResult } from '../harness/engine';
import type { LogEntry } from '../mock/types';
import type { MockClient } from '../mock/process';
import { FAST } from './videoRun';

/** Steps shared by the fault table (test/integration/faults.table.test.ts) and the other fault suites. */

/** Video Generate parameters with a fast poll, on a model that needs only a duration. */
export const generateParams = (prompt: string, extra: Record<string, unknown> = {}) => ({
	operation: 'generate',
	model: 'sd_2.0_fast_discount',
	prompt,
	duration: 5,
	options: FAST,
	...extra,
});

/** Path patterns of the mock's endpoints (regex sources, as fault rules take them). */
export const PATHS = {
	submit: '^/v1/tasks/vendor$',
	poll: '^/v1/tasks/task_[^/]+$',
	artifacts: '^/v1/tasks/task_[^/]+/artifacts$',
	content: '^/v1/tasks/task_[^/]+/artifacts/video/content$',
	models: '^/v1/models$',
} as const;

export type Endpoint = keyof typeof PATHS;

/** The log entries of one endpoint, in arrival order. */
export function entriesOf(log: LogEntry[], endpoint: Endpoint): LogEntry[] {
	const pattern = new RegExp(PATHS[endpoint]);
	return log.filter((entry) => pattern.test(entry.path.split('?')[0]));
}

/** Milliseconds between consecutive entries (arrival times as the mock logged them). */
export function gapsMs(entries: LogEntry[]): number[] {
	return entries.slice(1).map((entry, i) => Date.parse(entry.time) - Date.parse(entries[i].time));
}

/** The first task id a text names. */
export function taskIdIn(text: string): string {
	const match = /task_[0-9a-f]+/.exec(text);
	if (!match) throw new Error(`no task id in: ${text}`);
	return match[0];
}

/** Runs the Models node (Get Many) against the mock. */
export async function runModels(
	mock: MockClient,
	parameters: Record<string, unknown> = {},
	extra: Partial<HarnessNode> & { apiKey?: string; baseUrl?: string } = {},
): Promise<RunResult> {
	const { apiKey, baseUrl, ...node } = extra;
	return await runWorkflow({
		nodes: [
			{
				name: 'Models',
				type: 'genGatewayModels',
				parameters: { operation: 'getMany', returnAll: true, ...parameters },
				credentials: true,
				...node,
			},
		],
		credentials: { baseUrl: baseUrl ?? mock.url, apiKey: apiKey ?? mock.apiKey },
	});
}

/** Runs the Chat node (Message a Model, streamed) against the mock. */
export async function runStreamedChat(
	mock: MockClient,
	text: string,
	extra: Partial<HarnessNode> & { apiKey?: string } = {},
): Promise<RunResult> {
	const { apiKey, ...node } = extra;
	return await runWorkflow({
		nodes: [
			{
				name: 'Chat',
				type: 'genGatewayChat',
				parameters: {
					operation: 'message',
					model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' },
					messages: { values: [{ role: 'user', content: text }] },
					options: { streaming: 'always' },
				},
				credentials: true,
				...node,
			},
		],
		credentials: { baseUrl: mock.url, apiKey: apiKey ?? mock.apiKey },
	});
}

/** An error as a user sees it: message, description and the n8n error class. */
export function describeError(error: Error | undefined): { message: string; description: string; name: string } {
	const { message = '', description = '' } = (error ?? {}) as { message?: string; description?: string };
	return { message, description: description ?? '', name: error?.name ?? '' };
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
