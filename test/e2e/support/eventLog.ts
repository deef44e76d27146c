// n8n's event log in a home, and what n8n's crash recovery makes of it when n8n starts again (1.123.81 and 2.41.1).
//
// Every n8n process writes its event bus's messages (one JSON object a line, from a worker thread) to
// `<home>/.n8n/n8nEventLog.log`, `n8nEventLog-worker.log` for `n8n worker`. Each start reads the `-1` file and the
// current one, then renames them on (`.log` → `-1.log` → `-2.log` → `-3.log`) and logs into a new `.log` (recovery
// in progress is marked by `n8nEventLog.recoveryInProgress`). What it read decides the crash recovery: every
// execution with an `n8n.workflow.started` or node event but no end event after it (`n8n.workflow.success`,
// `n8n.workflow.failed`, `n8n.execution.throttled`, `n8n.execution.started-during-bootup`) counts as cut short, and
// ExecutionRecoveryService amends each one that has node events: it writes it `crashed`, then runs the
// post-execution hooks, which write an execution with a `waitTill` back as `waiting`, and n8n logs
// `Found unfinished executions: <ids>` (packages/cli/src/eventbus/message-event-bus-writer/
// message-event-bus-log-writer.ts getMessages, eventbus/message-event-bus/message-event-bus.ts, executions/
// execution-recovery.service.ts amend and runHooks).
//
// A parked (`waiting`) execution has no end event, ever: n8n's workflowExecuteAfter hook logs none for status
// `waiting` (execution-lifecycle/execution-lifecycle-hooks.ts, hookFunctionsWorkflowEvents). So each start after a
// SIGKILL amends every parked execution. That read-modify-write races n8n's wait tracker, which starts earlier in
// n8n's start-up: if an execution's Wait ends while n8n starts, the wait tracker resumes it (status `running`,
// waitTill cleared) and recovery can write it `crashed` for good, with no waitTill left to put it back. Measured on
// 2.41.1 (quiet machine, 13 restarts of one killed home with the Waits moved): the two whose Waits ended 0.1 s and
// 3.3 s before recovery began each left an execution `crashed`; Waits ending 4.4 s or more before it, or after it
// ended, did not (on a loaded machine a resumed run takes longer, so the window is wider). A test that kills n8n
// while executions wait can only keep its restart short and tell, with these functions, whether the restart met a
// Wait's end.
import * as fs from 'fs';
import * as path from 'path';

/** `main` for `n8n start` (and the CLI), `worker` for `n8n worker`. */
export type EventLogProcess = 'main' | 'worker';

export interface EventLogEntry {
	file: string;
	eventName: string;
	executionId?: string;
	nodeName?: string;
	ts?: string;
}

/** The events after which n8n's log writer no longer counts an execution as unfinished (both lines). */
export const EXECUTION_END_EVENTS = [
	'n8n.workflow.success',
	'n8n.workflow.failed',
	'n8n.execution.throttled',
	'n8n.execution.started-during-bootup',
];

/** The files n8n's next start reads for its recovery, oldest first (those that exist). */
export function eventLogFiles(n8nFolder: string, process: EventLogProcess = 'main'): string[] {
	const base = path.join(n8nFolder, process === 'worker' ? 'n8nEventLog-worker' : 'n8nEventLog');
	return [`${base}-1.log`, `${base}.log`].filter((file) => fs.existsSync(file));
}

/** The events in those files, in order (confirmation lines and lines cut short by a kill left out). */
export function readEventLog(n8nFolder: string, process: EventLogProcess = 'main'): EventLogEntry[] {
	const entries: EventLogEntry[] = [];
	for (const file of eventLogFiles(n8nFolder, process)) {
		for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
			let message: { eventName?: unknown; ts?: unknown; payload?: { executionId?: unknown; nodeName?: unknown } };
			try {
				message = JSON.parse(line);
			} catch {
				continue;
			}
			if (typeof message?.eventName !== 'string') continue;
			const { executionId, nodeName } = message.payload ?? {};
			entries.push({
				file: path.basename(file),
				eventName: message.eventName,
				executionId: executionId === undefined ? undefined : String(executionId),
				nodeName: typeof nodeName === 'string' ? nodeName : undefined,
				ts: typeof message.ts === 'string' ? message.ts : undefined,
			});
		}
	}
	return entries;
}

/**
 * The executions n8n's next start will read as cut short by a crash and hand to its recovery (those with node
 * events), as its log writer reads the files; recovery amends those its database does not hold as finished. A parked
 * execution is always among them.
 */
export function executionsToRecover(n8nFolder: string, process: EventLogProcess = 'main'): string[] {
	const unfinished = new Map<string, boolean>();
	for (const { eventName, executionId } of readEventLog(n8nFolder, process)) {
		if (executionId === undefined) continue;
		if (eventName === 'n8n.workflow.started') unfinished.set(executionId, false);
		else if (EXECUTION_END_EVENTS.includes(eventName)) unfinished.delete(executionId);
		else if (eventName === 'n8n.node.started' || eventName === 'n8n.node.finished') unfinished.set(executionId, true);
	}
	return [...unfinished].filter(([, hasNodeEvents]) => hasNodeEvents).map(([id]) => id);
}

export interface StartupRecovery {
	/** When this process saw n8n log the end of its recovery (Date.now()). */
	at: number;
	/** The executions n8n amended. */
	ids: string[];
}

/**
 * Watches a starting n8n's output for the end of its crash recovery (`Found unfinished executions: <ids>`, logged at
 * warn level once every execution it read as unfinished is amended). Start it before the n8n process, with what the
 * home has logged so far; resolves undefined after `timeoutMs` (nothing to recover, or n8n never got there).
 */
export async function watchStartupRecovery(logs: () => string, timeoutMs: number): Promise<StartupRecovery | undefined> {
	const from = logs().length;
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const match = /Found unfinished executions: ([0-9, ]+)/.exec(logs().slice(from));
		if (match) return { at: Date.now(), ids: match[1].split(',').map((id) => id.trim()).filter(Boolean) };
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	return undefined;
}

/**
 * One line on how a restart went for parked executions: when n8n's crash recovery ended, against the moment the first
 * of their Waits ends (`waitTill`, from the executions list). Recovery ending before that moment cannot meet a resume.
 */
export function describeRestart(
	recovery: StartupRecovery | undefined,
	parked: Array<{ id: string; waitTill?: string }>,
	killedAt: number,
): string {
	const waits = parked.filter((execution) => execution.waitTill).map((execution) => ({ id: execution.id, endsAt: Date.parse(execution.waitTill!) }));
	const first = waits.sort((a, b) => a.endsAt - b.endsAt)[0];
	const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
	if (!recovery) return `n8n logged no end of a crash recovery (parked: ${parked.map((execution) => execution.id).join(', ')})`;
	const head = `n8n's crash recovery amended ${recovery.ids.join(', ') || 'nothing'} and ended ${seconds(recovery.at - killedAt)} after the kill`;
	if (!first) return head;
	return recovery.at < first.endsAt
		? `${head}, ${seconds(first.endsAt - recovery.at)} before the first parked Wait ends (execution ${first.id}): no resume could meet it`
		: `${head}, ${seconds(recovery.at - first.endsAt)} AFTER the Wait of execution ${first.id} ended: n8n's wait tracker resumed parked executions while its recovery rewrote them, which can leave them crashed (n8n's race, test/e2e/README.md)`;
}
