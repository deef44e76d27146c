import type { IExecuteFunctions, IRunExecutionData } from 'n8n-workflow';

import { abortableSleep } from '../transport/wait';
import { eq } from './ledgerTable';
import type { LedgerTable } from './ledgerTable';
import { runReplaying } from './replayedRun';

/*
 * An execution holds its ledger rows as long as it runs, not only while its Generate node runs (issue 51). Generate
 * hands its tasks on when its node run ends, and the execution may go on for minutes; n8n writes the run data that
 * Recover and a Retry read (whether a task went on) only when the execution ends, by default. Let go at the node's
 * end, the rows read as orphans meanwhile: a scheduled Recover listed both tasks of a live run, and they were
 * delivered twice. So after its node run, an execution's rows stay leased, renewed by the process that runs it, until
 * n8n has saved that node run (its output then tells whether each task went on) or the execution is gone or cancelled.
 * A killed worker renews nothing: its rows are orphans once their lease runs out.
 */

/** A holder that stops renewing is taken for dead after this long; it renews every third of it. */
export const LEASE_MS = 60_000;
export const RENEW_MS = LEASE_MS / 3;

/** Failed reads of the execution's saved data in a row, or turns one read may take, before the hold stops renewing. */
const READS_TRIED = 3;

/** A read that has not answered yet. */
const LATE: unique symbol = Symbol('late');

/** The rows one execution holds in one node run. */
export const HELD = [eq('run_key'), eq('execution_id')];

/** A node run that ended, whose rows its execution still holds. */
interface HeldRun {
	runKey: string;
	nodeName: string;
	/** The run index its rows name (a Retry's: the run it replays, past n8n's stand-ins). */
	runIndex: number;
}

/** One hold per execution and table in this process: a loop's node runs share one renewal. */
const holds = new Map<string, ExecutionHold>();

export class ExecutionHold {
	private readonly runs = new Map<string, HeldRun>();
	private readonly stop = new AbortController();
	/** The renewals' loop: over once every run was let go (or the execution's state could not be read). */
	private kept: Promise<void> = Promise.resolve();
	private failedReads = 0;
	private warned = false;

	private constructor(
		private ctx: IExecuteFunctions,
		private table: LedgerTable,
		private readonly executionId: string,
		private readonly key: string,
	) {
		// A cancelled execution hands nothing on any more: its rows are let go at once.
		const cancelled = ctx.getExecutionCancelSignal?.();
		if (cancelled?.aborted) this.stop.abort();
		cancelled?.addEventListener('abort', () => this.stop.abort(), { once: true });
	}

	/**
	 * A node run ended while its execution goes on: its rows stay held until n8n has saved the run. `heldUntil` is when
	 * the node run's own lease ends: the first renewal comes before it.
	 */
	static keep(ctx: IExecuteFunctions, table: LedgerTable, executionId: string, run: HeldRun, heldUntil: number): void {
		const key = `${table.tableId}\n${executionId}`;
		let hold = holds.get(key);
		if (!hold) {
			hold = new ExecutionHold(ctx, table, executionId, key);
			holds.set(key, hold);
			hold.runs.set(run.runKey, run);
			hold.kept = hold.renewUntilOver(Math.min(RENEW_MS, Math.max(0, heldUntil - Date.now()) / 2));
			return;
		}
		// The latest node run's context and table: the earlier ones' node runs are over.
		hold.ctx = ctx;
		hold.table = table;
		hold.runs.set(run.runKey, run);
	}

	/**
	 * Lets every hold of this process go now, as a cancelled execution's (n8n never calls it: a test ends its
	 * executions with it). Resolves once the leases are let go.
	 */
	static async releaseAll(): Promise<void> {
		const all = [...holds.values()];
		holds.clear();
		for (const hold of all) hold.stop.abort();
		await Promise.all(all.map(async (hold) => await hold.kept));
	}

	private async renewUntilOver(firstWait: number): Promise<void> {
		// A read of the saved data still waited for, and the turns it has taken: a slow read (a loaded database) goes on
		// across turns while the leases are renewed; one that has not answered in READS_TRIED turns counts as failed.
		let reading: Promise<HeldRun[] | undefined> | undefined;
		let turnsReading = 0;
		for (let wait = firstWait; this.runs.size > 0; wait = RENEW_MS) {
			const cancelled = await abortableSleep(wait, this.stop.signal).then(
				() => this.stop.signal.aborted,
				() => true,
			);
			// Renewed before the read, every turn: a slow read must not let a live run's leases lapse (found by an
			// attack: the renewal waited for a 45 s read, and Recover took a live run's tasks meanwhile).
			if (!cancelled) await this.write([...this.runs.values()], Date.now() + LEASE_MS, 'renewing the leases');
			let over: HeldRun[];
			if (cancelled) over = [...this.runs.values()];
			else {
				reading ??= this.over();
				const answer = await this.within(reading, RENEW_MS);
				if (answer === LATE && ++turnsReading < READS_TRIED) continue;
				reading = undefined;
				turnsReading = 0;
				// A read unanswered for READS_TRIED turns, or READS_TRIED failed reads in a row: the leases run out as a
				// dead worker's would.
				if (answer === LATE || (answer === undefined && ++this.failedReads >= READS_TRIED)) {
					this.warn(
						'reading its saved data',
						`${READS_TRIED} times in a row it failed or did not answer; its rows are orphans once their lease runs out`,
					);
					break;
				}
				if (answer === undefined) continue;
				this.failedReads = 0;
				over = answer;
			}
			for (const run of over) this.runs.delete(run.runKey);
			await this.write(over, 0, 'letting the leases go');
		}
		if (holds.get(this.key) === this) holds.delete(this.key);
	}

	/** The read's answer, or LATE when it has not come within `ms` (the read goes on; it may answer at a later turn). */
	private async within<T>(read: Promise<T>, ms: number): Promise<T | typeof LATE> {
		const answered = new AbortController();
		const late = abortableSleep(ms, answered.signal).then(
			(): typeof LATE => LATE,
			(): typeof LATE => LATE,
		);
		try {
			return await Promise.race([read, late]);
		} finally {
			answered.abort();
		}
	}

	/**
	 * The held runs that are over: each one n8n has saved (its output says whether each task went on), or all when the
	 * execution is gone from n8n's database (ended and not kept). Unknown (a failed read): undefined.
	 */
	private async over(): Promise<HeldRun[] | undefined> {
		let saved: IRunExecutionData | undefined;
		try {
			saved = await this.ctx.getExecutionDataById(this.executionId);
		} catch {
			return undefined;
		}
		const runs = [...this.runs.values()];
		if (!saved) return runs;
		// With progress not saved (n8n's default) the run appears when the execution ends; with it saved, at once.
		return runs.filter((run) => runReplaying(saved.resultData?.runData?.[run.nodeName], run.runIndex) !== undefined);
	}

	/** One write for the rows of these runs; a renewal that fails is tried again at the next turn. */
	private async write(runs: HeldRun[], leaseUntil: number, what: string): Promise<void> {
		if (runs.length === 0) return;
		const changes = runs.map((run) => ({
			where: { run_key: run.runKey, execution_id: this.executionId },
			set: { lease_until: leaseUntil },
		}));
		await this.table.updateEach(HELD, changes).catch((error: unknown) => this.warn(what, error));
	}

	private warn(what: string, error: unknown): void {
		if (this.warned) return;
		this.warned = true;
		const message = (error as Error)?.message ?? String(error);
		this.ctx.logger.warn(`Task Ledger: execution ${this.executionId}: ${what} failed: ${message}`);
	}
}
