import * as n8nWorkflow from 'n8n-workflow';

/**
 * An abortable wait on whichever n8n-workflow the running n8n provides. Timers of their own are off limits to
 * community nodes, and n8n-workflow's own helpers differ between lines:
 *   - 1.x and 2.0–2.33: `sleepWithAbort(ms, signal)`; their `sleep(ms)` ignores any signal;
 *   - 2.34 and later: only `sleep(ms, signal?)`, which rejects with the signal's reason (a plain AbortError).
 * The package runs against n8n's own copy (not the one it was built with), so the choice is made at run time.
 */
type AbortableSleep = (ms: number, signal?: AbortSignal) => Promise<void>;

type SleepExports = Record<string, unknown>;

/** Picks the abortable wait that a given n8n-workflow module offers (exported for tests of both shapes). */
export function abortableSleepOf(lib: SleepExports): AbortableSleep {
	// `sleep` exists on every line n8n-workflow has shipped.
	const plain = lib.sleep as (ms: number, signal?: AbortSignal) => Promise<void>;
	const withAbort = lib.sleepWithAbort;
	if (typeof withAbort === 'function') {
		const abortable = withAbort as (ms: number, signal: AbortSignal) => Promise<void>;
		return async (ms, signal) => (signal ? await abortable(ms, signal) : await plain(ms));
	}
	return async (ms, signal) => await plain(ms, signal);
}

let chosen: AbortableSleep | undefined;

/** The longest one timer waits: Node ends a longer one at once (a Timeout or bound of weeks would not wait at all). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits `ms`. When `signal` fires first, rejects with n8n's own "execution cancelled" error on every line, so the
 * engine records the run as cancelled, not failed (n8n 2.x's AbortError would read as a failure).
 */
export async function abortableSleep(ms: number, signal?: AbortSignal, executionId = ''): Promise<void> {
	chosen ??= abortableSleepOf(n8nWorkflow as unknown as SleepExports);
	const sleep = chosen;
	for (let left = ms; ; left -= MAX_TIMER_MS) {
		const failure = await sleep(Math.min(left, MAX_TIMER_MS), signal).then(
			() => undefined,
			(error: unknown) => error ?? new Error('wait failed'),
		);
		if (failure !== undefined) {
			if (signal?.aborted) throw new n8nWorkflow.ManualExecutionCancelledError(executionId);
			throw failure;
		}
		if (left <= MAX_TIMER_MS) return;
	}
}
