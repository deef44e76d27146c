import { createHash } from 'crypto';

import { runWorkflow } from '../harness/engine';
import type { HarnessNode, RunOptions, RunResult } from '../harness/engine';
import type { MockClient } from '../mock/process';

type VideoRunExtra = Partial<HarnessNode> & {
	input?: Array<Record<string, unknown>>;
	signal?: AbortSignal;
	executionId?: string;
	binaryMode?: 'default' | 'filesystem';
};

/** The run of one Gen Gateway Video node against the mock (for runWorkflow, or several for runWorkflowsTogether). */
export function videoRunOptions(
	mock: MockClient,
	parameters: Record<string, unknown>,
	extra: VideoRunExtra = {},
): RunOptions {
	const { input, signal, executionId, binaryMode, ...node } = extra;
	return {
		nodes: [{ name: 'Video', type: 'genGatewayVideo', parameters, credentials: true, ...node }],
		input,
		signal,
		executionId,
		binaryMode: binaryMode ?? 'filesystem',
		credentials: { baseUrl: mock.url, apiKey: mock.apiKey },
	};
}

/** Runs one Gen Gateway Video node against the mock through n8n's real engine. */
export async function runVideo(
	mock: MockClient,
	parameters: Record<string, unknown>,
	extra: VideoRunExtra = {},
): Promise<RunResult> {
	return await runWorkflow(videoRunOptions(mock, parameters, extra));
}

export const FAST = { pollInterval: 1, maxWait: 1 };

export const sha256 = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');

/** Requests the mock saw, as "METHOD path" lines (query strings dropped). */
export async function requestLines(mock: MockClient): Promise<string[]> {
	return (await mock.log()).map((entry) => `${entry.method} ${entry.path.split('?')[0]}`);
}

/** Scans anything JSON-able for the key; returns the places it was found. */
export function findSecret(secret: string, ...things: unknown[]): string[] {
	return things
		.map((thing, index) => ({ index, text: typeof thing === 'string' ? thing : JSON.stringify(thing) ?? '' }))
		.filter(({ text }) => text.includes(secret))
		.map(({ index }) => `argument ${index}`);
}
