// Per-phase times written by the tests themselves: every timed phase (n8n install, home set-up, n8n CLI calls, n8n
// start, sign-in, browser launch, workflow runs, idle waits) is appended as one JSON line to the run's phase file,
// which test/timing/reporter.js sums up per test file at the end of every jest run. A phase costs one appendFileSync.
import * as fs from 'fs';
import * as path from 'path';

/** The kinds of time a test spends; the reporter prints one column per kind. */
export type PhaseKind =
	| 'install' // scripts/install-n8n.sh, Chromium, Redis/PostgreSQL (nothing when cached)
	| 'home' // a fresh n8n home: our package packed and installed as n8n installs it
	| 'cli' // a short-lived n8n CLI process: import, update, execute (each a cold n8n start)
	| 'start' // `n8n start` until its REST API answers
	| 'rest' // set-up through a running server's REST API: credential and workflow imports, activation
	| 'signin' // owner set-up or login, over REST or in the browser
	| 'browser' // Chromium launch
	| 'run' // a workflow run the test waits for (CLI execute, webhook call, chat message)
	| 'wait'; // idle waiting for n8n (its wait tracker, a webhook's registration, a kill's aftermath)

export interface PhaseRecord {
	/** The jest run (reporter sets GEN_GATEWAY_TIMING_RUN), so one file can hold many runs. */
	run: string;
	/** Test file, relative to the repository. */
	file: string;
	/** The test it ran in, when inside one (set-up and tear-down have none). */
	test?: string;
	kind: PhaseKind;
	/** What exactly, e.g. `n8n execute`, `n8n start`. */
	what: string;
	startedAt: number;
	ms: number;
	ok: boolean;
}

const REPO_ROOT = path.resolve(__dirname, '../..');

/** Where phases go: GEN_GATEWAY_TIMING_FILE (set by the reporter) or test/e2e/.work/timing/phases.jsonl. */
export function phaseFile(): string {
	return process.env.GEN_GATEWAY_TIMING_FILE ?? path.join(REPO_ROOT, 'test', 'e2e', '.work', 'timing', 'phases.jsonl');
}

/** The current test file and test name as jest knows them (undefined outside jest). */
function currentTest(): { file: string; test?: string } {
	// eslint-disable-next-line @typescript-eslint/no-explicit-any
	const state = (globalThis as any).expect?.getState?.() as { testPath?: string; currentTestName?: string } | undefined;
	const testPath = state?.testPath ?? process.env.GEN_GATEWAY_TIMING_FILE_LABEL ?? 'outside jest';
	return { file: path.relative(REPO_ROOT, testPath) || testPath, test: state?.currentTestName };
}

/** Appends one finished phase (never throws: timing must not fail a test). */
export function recordPhase(kind: PhaseKind, what: string, startedAt: number, ok = true): void {
	const record: PhaseRecord = {
		run: process.env.GEN_GATEWAY_TIMING_RUN ?? 'adhoc',
		...currentTest(),
		kind,
		what,
		startedAt,
		ms: Date.now() - startedAt,
		ok,
	};
	try {
		const file = phaseFile();
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.appendFileSync(file, JSON.stringify(record) + '\n');
	} catch {
		// a read-only folder: no timing, the test goes on
	}
}

/** Times `work` as one phase of the given kind. */
export async function timed<T>(kind: PhaseKind, what: string, work: () => Promise<T>): Promise<T> {
	const startedAt = Date.now();
	let ok = false;
	try {
		const result = await work();
		ok = true;
		return result;
	} finally {
		recordPhase(kind, what, startedAt, ok);
	}
}

/** Synchronous variant of timed(). */
export function timedSync<T>(kind: PhaseKind, what: string, work: () => T): T {
	const startedAt = Date.now();
	let ok = false;
	try {
		const result = work();
		ok = true;
		return result;
	} finally {
		recordPhase(kind, what, startedAt, ok);
	}
}
