// Reading what `n8n execute` printed and what the mock saw, for the e2e tests.
import { createHash } from 'crypto';

import type { MockClient } from '../../mock/process';
import type { LogEntry } from '../../mock/types';
import { runError, type ExecuteResult } from '../n8n';

/** Generous: other engineers run heavy things on this 2-core machine; a cold `n8n execute` takes 5-10 s. */
export const SETUP_TIMEOUT = 20 * 60_000;
export const RUN_TIMEOUT = 4 * 60_000;

/** A failed expectation on a run shows what n8n printed. */
export function explain(run: ExecuteResult): string {
	return `exit ${run.exitCode} (${run.signal ?? 'no signal'}) after ${run.durationMs} ms\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`;
}

/** Throws (with n8n's output) unless the run finished cleanly and printed its result. */
export function expectSucceeded(run: ExecuteResult): void {
	if (run.exitCode !== 0 || !run.json || runError(run.json)) throw new Error(`the run failed: ${explain(run)}`);
}

/** Throws (with n8n's output) unless the run failed the n8n way: exit code 1 and an error in its result. */
export function expectFailed(run: ExecuteResult): { message: string; description?: string; [key: string]: unknown } {
	const error = runError(run.json);
	if (run.exitCode !== 1 || !error) throw new Error(`expected a failed run: ${explain(run)}`);
	return error;
}

export function sha256(data: Buffer): string {
	return createHash('sha256').update(data).digest('hex');
}

/** The mock's log from now on: call before a run, read after it. */
export async function logCursor(mock: MockClient): Promise<() => Promise<LogEntry[]>> {
	const before = Math.max(0, ...(await mock.log()).map((entry) => entry.seq));
	return async () => (await mock.log()).filter((entry) => entry.seq > before);
}

/** Log entries of paid video submissions. */
export function submissionsIn(log: LogEntry[]): LogEntry[] {
	return log.filter((entry) => entry.method === 'POST' && entry.path.split('?')[0] === '/v1/tasks/vendor');
}
