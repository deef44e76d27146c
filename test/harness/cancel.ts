import type { WorkflowExecute } from 'n8n-core';
import type { IRun } from 'n8n-workflow';

type RunningExecution = ReturnType<WorkflowExecute['processRunExecutionData']>;

/** How long a cancelled execution may take to stop before the harness reports it as stuck. */
export const DEFAULT_CANCEL_GRACE_MS = 5_000;

/**
 * Awaits the engine's run, cancelling it (PCancelable.cancel, which aborts the execution's
 * AbortController as n8n's "stop execution" does) when `signal` aborts or `timeoutMs` passes.
 * The engine then finishes the current node and resolves with a cancelled run; a node that ignores
 * the cancel signal makes this reject after `graceMs` instead of hanging the test.
 */
export async function cancelOnSignalOrTimeout(
	running: RunningExecution,
	{ signal, timeoutMs, graceMs }: { signal?: AbortSignal; timeoutMs?: number; graceMs: number },
): Promise<IRun> {
	return await new Promise<IRun>((resolve, reject) => {
		let graceTimer: NodeJS.Timeout | undefined;
		let timeoutTimer: NodeJS.Timeout | undefined;

		const cancel = (reason: string) => {
			if (graceTimer) return;
			running.cancel();
			graceTimer = setTimeout(
				() => reject(new Error(`test harness: the execution did not stop within ${graceMs} ms after ${reason}`)),
				graceMs,
			);
		};
		const onAbort = () => cancel('the signal aborted');

		if (signal?.aborted) onAbort();
		else signal?.addEventListener('abort', onAbort, { once: true });
		if (timeoutMs !== undefined) timeoutTimer = setTimeout(() => cancel(`the ${timeoutMs} ms timeout`), timeoutMs);

		running
			.then(resolve, reject)
			.finally(() => {
				clearTimeout(graceTimer);
				clearTimeout(timeoutTimer);
				signal?.removeEventListener('abort', onAbort);
			});
	});
}
