import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData, IRunExecutionData } from 'n8n-workflow';

import { fingerprint } from '../run/fingerprint';

import type { Lane } from '../transport/lane';
import { abortableSleep } from '../transport/wait';
import { waitFor } from '../transport/transport';
import { maySendAgain } from '../transport/retry';
import {
	anotherRequest,
	handedOnByAnother,
	holdRanOut,
	leaseLost,
	stillHeld,
	takenByAnother,
	unknownOutcome,
} from './ledgerErrors';
import { BY_CLAIM, BY_ID, detailOf, eq, inFlight, LedgerTable, sentAfter } from './ledgerTable';
import type { LedgerRow, LedgerState, RowChange } from './ledgerTable';
import { retriedRunIndex, runReplaying } from './replayedRun';
import { ExecutionHold, HELD, LEASE_MS, RENEW_MS } from './executionHold';

export { LEASE_MS };

/**
 * The task ledger: every paid video task is a row of an n8n Data Table, marked as sent before its POST and `accepted`
 * with its id the moment the service accepts it, so that a worker killed at any point leaves the task's id where
 * every worker and the main can read it. Retry of the crashed execution adopts those tasks instead of paying again;
 * Recover lists those nobody took. Whether a task went on from its node run is read from what n8n saved of that run.
 * The identity, the claim protocol and what each kill leaves: docs/queue-mode.md, docs/design/dead-worker.md.
 *
 * What it costs (each write is a sub-workflow run, an n8n execution, and each row it touches a few database
 * statements): one read and one insert of `planned` rows when the run starts, one row written per task (its
 * `accepted` state names the next task's row as sent after it), a lease renewal every LEASE_MS / 3 while the
 * execution lasts (executionHold.ts: after the node run, with a read of the execution's saved data each time), and
 * one write when n8n has saved the node run (the leases let go).
 */

/** The prompt's first characters a row records (what Recover shows, and what a Retry compares). */
const PROMPT_KEPT = 200;

/** What a row paid for, as far as it records it. */
function paidForOf(row: LedgerRow): SubmissionMeta {
	const paid = detailOf(row);
	return { model: String(paid.model ?? ''), prompt: String(paid.prompt ?? '') };
}

/** Whether a row paid for this request (its model and the prompt's recorded characters). */
const samePaid = (paid: SubmissionMeta, meta: SubmissionMeta) =>
	paid.model === meta.model && paid.prompt === meta.prompt.slice(0, PROMPT_KEPT);

/** Reads of the other runs' rows, at most, for one item of a Retry that waits leases out (submit). */
const ADOPT_ROUNDS = 3;

interface LedgerScope {
	tableId: string;
	workflowId: string;
	nodeId: string;
	nodeName: string;
	runIndex: number;
	executionId: string;
	/** The execution is n8n's Retry of a failed or crashed one (mode `retry`): it may adopt that run's tasks. */
	retry: boolean;
}

interface LedgerSubmission {
	taskId: string;
	/** True when the task was paid before (an earlier run of this lineage) and adopted, not paid now. */
	resumed: boolean;
	acceptedAt: number;
}

interface SubmissionMeta {
	model: string;
	prompt: string;
}

/** One item the run will submit: what `plan` writes a `planned` row for. */
interface PlannedSubmission {
	itemIndex: number;
	meta: SubmissionMeta;
}

/** An item waiting for the window, with its row (not yet `sending`). */
interface Waiter {
	itemIndex: number;
	row: LedgerRow;
	resolve: () => void;
	reject: (error: unknown) => void;
}

/**
 * Which orphans a retry looks at first: tasks known to be paid, then unknown outcomes (also those Recover reported:
 * still never resent), then tasks Recover took (reused, never paid again).
 */
const ADOPTION_ORDER: LedgerState[] = ['accepted', 'sending', 'planned', 'reported', 'recovered'];

/**
 * Whether a row's task went on from its node run: n8n saved that run without an error, and its output holds an item
 * (not an error item) with the row's task id. A run never saved (killed first), saved as failed (its items never went
 * on), or an item that failed after its task was paid, handed nothing on.
 */
export async function handedOn(
	ctx: IExecuteFunctions,
	row: LedgerRow,
	/** Executions read so far (one read per execution, however many of its rows are asked about). */
	reads: Map<string, Promise<IRunExecutionData | undefined>> = new Map(),
): Promise<boolean> {
	if (row.state !== 'accepted' || !row.task_id) return false;
	const nodeName = String(detailOf(row).node_name ?? '');
	const runIndex = Number(row.run_key.split('/').pop());
	let read = reads.get(row.execution_id);
	if (!read) {
		read = ctx.getExecutionDataById(row.execution_id).catch(() => undefined);
		reads.set(row.execution_id, read);
	}
	const saved = await read;
	// The run of that execution that the row's run index names, past any stand-in of n8n's crash recovery.
	const run = runReplaying(saved?.resultData?.runData?.[nodeName], runIndex);
	if (!run || run.error !== undefined) return false;
	const items = (run.data?.main ?? []).flatMap((output) => output ?? []);
	return items.some((item) => item.json?.task_id === row.task_id && item.json?.error === undefined);
}

/** Characters of an in-memory file's base64 read at each end for its identity (not the whole file). */
const SAMPLE = 65_536;

/**
 * What tells two files of the same name, type and printed size apart (two form uploads "photo.jpg" of 1.23 MB were one
 * item to the ledger, and a Retry could hand one execution's video to the other: found by the review of cb49ba5).
 * n8n's stored files have an id, unique per file and kept by a Retry (it runs on the saved run data); a file kept in
 * memory (binary mode `default`) has no id: its length and both ends of its base64 instead.
 */
function fileIdentity(file: IBinaryData): string {
	if (file.id) return file.id;
	const data = String(file.data ?? '');
	const sample = data.length > 2 * SAMPLE ? data.slice(0, SAMPLE) + data.slice(-SAMPLE) : data;
	return `${data.length}:${fingerprint(sample)}`;
}

/**
 * Each input item's key (`item_key`): what the item is, not where it stands nor what its request evaluates to. The
 * fingerprint of its JSON and of its binary files (name, type, size, fileIdentity), and how many earlier items of the input have the
 * same fingerprint (two identical items are two tasks). A Retry gets the same items from the saved run, also in
 * another order, while `{{ $now }}` in a prompt changes on every try; and the executions of one workflow (which share
 * a `run_key`) never meet each other's rows unless their items are the same (found by bench:scale's queue case: with
 * the item index alone, a Retry took fifty other executions' rows at its indexes for its own).
 */
export function itemKeys(items: INodeExecutionData[]): string[] {
	const seen = new Map<string, number>();
	return items.map((item) => {
		const files = Object.entries(item.binary ?? {}).map(([name, file]) => [
			name,
			file.fileName,
			file.mimeType,
			file.fileSize,
			fileIdentity(file),
		]);
		const print = fingerprint(JSON.stringify([item.json ?? {}, files]));
		const occurrence = seen.get(print) ?? 0;
		seen.set(print, occurrence + 1);
		return `${print}#${occurrence}`;
	});
}

/**
 * Each item's files (fileIdentity; '' without files), recorded in its row: a Retry's item whose key changed (its JSON
 * stamped anew) is taken for a row at its position with its request only with the same files, never with another
 * picture (found by the property test: two same-looking pictures swapped).
 */
function filesOf(items: INodeExecutionData[]): string[] {
	return items.map((item) => {
		const files = Object.entries(item.binary ?? {}).map(([name, file]) => [name, fileIdentity(file)]);
		return files.length === 0 ? '' : fingerprint(JSON.stringify(files));
	});
}

export class TaskLedger {
	private rows: LedgerRow[] = [];
	/** The row each submitting item sends under, by item index (its `planned` row, or one inserted late). */
	private readonly slots = new Map<number, Promise<LedgerRow>>();
	/** The item in the unknown-outcome window: its row is `sending` and its outcome not yet written (see lane). */
	private holder?: number;
	/** A holder's outcome is being written (and the next item's `sending` with it). */
	private handing = false;
	private waiters: Waiter[] = [];
	/** Accepted tasks whose `accepted` write failed, by row id: written again when the run ends. */
	private readonly unrecorded = new Map<number, RowChange>();
	private readonly renewal = new AbortController();
	private renewing?: Promise<void>;
	/**
	 * Until when this run's hold on its rows is known to others: LEASE_MS after it opened, then after each renewal that
	 * committed while the hold still ran (once it ran out it is never extended again: holdLost).
	 */
	private heldUntil = Date.now() + LEASE_MS;

	/** How many leases this run waited out (untilLeaseEnds). */
	private waits = 0;
	/** How many leases this run had waited out when it last read the other executions' rows (refreshOthers). */
	private refreshedAfter = -1;
	/** When that read started (refreshOthers). */
	private readAt = 0;
	/** The read of the other executions' rows under way, and the leases waited out when it started. */
	private reading?: { after: number; read: Promise<void> };
	/** The task ids this run handed to its items (sent, resumed or adopted). */
	private readonly tasks = new Set<string>();
	/** Each other execution's row as this run first read it: its `claims` then (adopt: handedOnByAnother). */
	private readonly firstClaims = new Map<number, number>();
	/** The rows this run adopted, and for which item. */
	private readonly adoptedFor = new Map<number, number>();
	/** Each input item's `item_key` (itemKeys), by item index. */
	private readonly keys: string[];
	/** Each input item's files (filesOf), by item index. */
	private readonly files: string[];

	private constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly table: LedgerTable,
		readonly scope: LedgerScope,
	) {
		this.keys = itemKeys(ctx.getInputData());
		this.files = filesOf(ctx.getInputData());
	}

	/** Whether a row is the paid request of this item: its node run's row for the same input item. */
	private sameItem(row: LedgerRow, itemIndex: number): boolean {
		return row.item_key === this.keys[itemIndex];
	}

	/**
	 * Whether a row of this execution is this item's: the item it was adopted for, else its key. A row adopted from an
	 * identical item's other occurrence keeps that key, and must not read as that other item's own row (found by the
	 * property test: one task handed to two items).
	 */
	private mine(row: LedgerRow, itemIndex: number): boolean {
		if (row.execution_id !== this.scope.executionId) return false;
		const adopted = this.adoptedFor.get(row.id);
		return adopted === undefined ? this.sameItem(row, itemIndex) : adopted === itemIndex;
	}

	/** Whether a row's item is this item or one identical to it (the same fingerprint, whatever its occurrence). */
	private samePrint(row: LedgerRow, itemIndex: number): boolean {
		return row.item_key.split('#')[0] === this.keys[itemIndex].split('#')[0];
	}

	get runKey(): string {
		return `${this.scope.workflowId}/${this.scope.nodeId}/${this.scope.runIndex}`;
	}

	/**
	 * Reads this node run's rows once: its own (Retry On Fail, a 1.x worker re-running a job); on a Retry also the other
	 * executions' rows of the node run, among them the crashed run's.
	 */
	static async open(ctx: IExecuteFunctions, scope: LedgerScope): Promise<TaskLedger> {
		const ledger = new TaskLedger(ctx, new LedgerTable(ctx, scope.tableId), scope);
		ledger.rows = scope.retry
			? await ledger.table.read([eq('run_key')], { run_key: ledger.runKey })
			: await ledger.table.read(HELD, { run_key: ledger.runKey, execution_id: scope.executionId });
		ledger.noteFirstClaims(ledger.rows);
		ledger.renewing = ledger.renewLeases();
		return ledger;
	}

	/** A row whose request may have reached the service: anything but `planned` and `refused`, or a row in flight. */
	private mayHaveBeenSent(row: LedgerRow, named: Set<number>): boolean {
		return (row.state !== 'planned' && row.state !== 'refused') || inFlight(row, named);
	}

	private newRow(itemIndex: number, meta: SubmissionMeta): IDataObject {
		const detail = {
			node_name: this.scope.nodeName,
			item_index: itemIndex,
			model: meta.model,
			prompt: meta.prompt.slice(0, PROMPT_KEPT),
			files: this.files[itemIndex],
		};
		return {
			workflow_id: this.scope.workflowId,
			run_key: this.runKey,
			item_key: this.keys[itemIndex],
			execution_id: this.scope.executionId,
			state: 'planned',
			task_id: '',
			claims: 0,
			lease_until: Date.now() + LEASE_MS,
			detail: JSON.stringify(detail),
		};
	}

	/**
	 * One insert for the `planned` rows of every item this run will submit (nothing sent yet: a planned row is never
	 * an unknown outcome). A failed insert is logged, and each item then writes its own row before its POST.
	 */
	async plan(submissions: PlannedSubmission[]): Promise<void> {
		// A request with a row that may have been paid is resumed or adopted, not planned (a planned or refused row of
		// another run is nothing paid: the request gets a row of this run's own).
		const named = sentAfter(this.rows);
		const fresh = submissions.filter(
			({ itemIndex }) => !this.rows.some((row) => this.sameItem(row, itemIndex) && this.mayHaveBeenSent(row, named)),
		);
		if (fresh.length === 0) return;
		const rows = fresh.map((entry) => this.newRow(entry.itemIndex, entry.meta));
		try {
			this.rows.push(...(await this.table.insert(rows)));
		} catch (error) {
			this.warn('planning the run\'s rows', error);
		}
	}

	/**
	 * Pays for one item's request at most once in this execution's lineage: resumes its own row, adopts (on a Retry) a
	 * dead run's row of the same item, or sends in the ledger's lane (`send` gets it) and records the task
	 * id.
	 */
	async submit(
		meta: SubmissionMeta,
		lane: Lane,
		send: (lane: Lane) => Promise<string>,
	): Promise<LedgerSubmission> {
		const { itemIndex } = lane;
		const mine = (row: LedgerRow) => this.mine(row, itemIndex);
		const named = sentAfter(this.rows);
		const own = this.rows.find((row) => mine(row) && this.mayHaveBeenSent(row, named));
		if (own) return this.resumed(itemIndex, own, named);
		if (this.scope.retry && this.rows.some((row) => this.related(row, itemIndex, meta))) {
			// A lease waited out lets time pass: what the other runs did meanwhile is read again, and the item may now
			// have a task to take over (found by the property test: a stalled holder's task paid again).
			// So does a row read while its holder still held it, whose lease looks over now (outdated).
			for (let round = 0, again = true; again && round < ADOPT_ROUNDS; round++) {
				const before = this.waits;
				await this.refreshOthers(itemIndex, meta);
				const adopted = await this.adopt(itemIndex, meta);
				if (adopted) return adopted;
				again = this.waits > before || this.outdated(itemIndex, meta);
			}
			await this.notHeldElsewhere(itemIndex, meta);
		}
		const planned = this.rows.find((row) => mine(row) && row.state === 'planned');
		const slot = planned
			? Promise.resolve(planned)
			: this.table.insert([this.newRow(itemIndex, meta)]).then(([row]) => {
					this.rows.push(row);
					return row;
				});
		slot.catch(() => undefined);
		this.slots.set(itemIndex, slot);
		const outcome = await send(this.lane(lane)).then(
			(taskId) => ({ ok: true as const, taskId }),
			(error: unknown) => ({ ok: false as const, error }),
		);
		const acceptedAt = Date.now();
		const accepted = async (taskId: string) => ({
			state: 'accepted',
			task_id: taskId,
			detail: JSON.stringify({ ...detailOf(await slot), submitted_at: new Date(acceptedAt).toISOString() }),
		});
		// Refused for sure (nothing paid): a retry may pay; an unknown outcome leaves the row `sending`.
		const refused = !outcome.ok && maySendAgain(outcome.error) ? { state: 'refused' } : undefined;
		await this.leave(itemIndex, outcome.ok ? await accepted(outcome.taskId) : refused);
		this.slots.delete(itemIndex);
		if (!outcome.ok) throw outcome.error;
		this.tasks.add(outcome.taskId);
		return { taskId: outcome.taskId, resumed: false, acceptedAt };
	}

	/**
	 * The item's submission lane with the ledger's rule: a task is in the unknown-outcome window from its POST until
	 * its `accepted` write commits (a kill then loses its id: the service has it, the ledger does not), so no other
	 * item's POST starts while one is there: one task at a time per node run is in that window, however fast the
	 * service answers and however slow the database writes. Before its POST a row is marked as sent: by the previous
	 * holder's outcome, written with `next_row` naming it (one row written per task), or, when the window was empty,
	 * by its own `sending` write. Waits and downloads go on in parallel.
	 */
	private lane(lane: Lane): Lane {
		const { itemIndex } = lane;
		return {
			itemIndex,
			gate: async (call) =>
				await lane.gate(async () => {
					await this.enter(itemIndex);
					return await call();
				}),
		};
	}

	/** Resolves once this item holds the window and its row is marked as sent (a POST tried again: at once). */
	private async enter(itemIndex: number): Promise<void> {
		if (this.holder === itemIndex) return;
		const slot = this.slots.get(itemIndex);
		if (!slot) return;
		const row = await slot;
		// Checked and taken with no await between: two items never both hold the window.
		if (this.holder === undefined && !this.handing) {
			if (this.holdLost()) throw leaseLost(this.ctx, itemIndex, row);
			this.holder = itemIndex;
			// A failed write (the table's NodeOperationError) fails the item before its POST: nothing sent.
			const failed = await this.markSent(itemIndex, row).then(() => undefined, (error: unknown) => error);
			if (failed === undefined) return;
			this.holder = undefined;
			void this.handOn();
			throw failed;
		}
		await new Promise<void>((resolve, reject) => this.waiters.push({ itemIndex, row, resolve, reject }));
	}

	/**
	 * The item's own `sending` write; it counts only if it changed the row (a Retry or Recover that claimed the row
	 * meanwhile wins) and committed while this run's hold still ran. A Retry acts on what it reads once the lease is
	 * over, so a mark that commits later may come after the Retry paid (found by the review of cb49ba5): the POST is
	 * not sent, and the mark is taken back (best effort: a mark left is an unknown outcome, never a second payment).
	 */
	private async markSent(itemIndex: number, row: LedgerRow): Promise<void> {
		const [changed] = await this.writeWindow([this.sending(row)]);
		if (!changed) throw takenByAnother(this.ctx, itemIndex, row);
		if (!this.holdLost()) return;
		await this.writeWindow([this.change(this.current(row), { state: 'planned' })]).catch(() => undefined);
		throw leaseLost(this.ctx, itemIndex, row);
	}

	/** The row as this run knows it now (after its own writes). */
	private current(row: LedgerRow): LedgerRow {
		return this.rows.find((entry) => entry.id === row.id) ?? row;
	}

	/** The next waiting item, unless the run's hold ran out (holdLost: then each is refused, nothing sent). */
	private nextWaiter(): Waiter | undefined {
		for (let next = this.waiters.shift(); next; next = this.waiters.shift()) {
			if (!this.holdLost()) return next;
			next.reject(leaseLost(this.ctx, next.itemIndex, next.row));
		}
		return undefined;
	}

	/**
	 * Whether this run's hold on its rows ran out: a lease is what tells others that its holder lives, and no renewal
	 * reached the table for LEASE_MS (the database was away, or n8n stalled). A Retry may then have taken an item over
	 * and paid for it, so from then on no item is marked as sent nor sent (leaseLost): a renewal that comes late does
	 * not undo what another run may have done meanwhile.
	 */
	private holdLost(): boolean {
		return Date.now() >= this.heldUntil;
	}

	private sending(row: LedgerRow): RowChange {
		return this.change(row, { state: 'sending', task_id: '', lease_until: Date.now() + LEASE_MS });
	}

	/** A window write's change of one row: always the same columns, so that several rows go in one run. */
	private change(row: LedgerRow, set: IDataObject): RowChange {
		return {
			where: { id: row.id, claims: row.claims },
			set: { state: row.state, task_id: row.task_id, detail: row.detail, lease_until: row.lease_until, ...set },
		};
	}

	/**
	 * The holder's outcome is known: its row's new state (none: an unknown outcome, the row stays as sent) goes in one
	 * write with `next_row` naming the next waiting item's row, then the window is the next item's. A failed write
	 * loses no task id (it is in the output, and the run's last write records it again); the next item then sends
	 * nothing.
	 */
	private async leave(itemIndex: number, set: IDataObject | undefined): Promise<void> {
		if (this.holder !== itemIndex) return;
		this.handing = true;
		// The row as this run last wrote it: its slot still says `planned` after its own `sending` write, and an unknown
		// outcome written back from it lost its mark (found by the ledger's property test: the task was resent).
		const row = this.current(await this.slots.get(itemIndex)!);
		const next = this.nextWaiter();
		const detail = (set?.detail as string | undefined) ?? row.detail;
		const nextRow = next ? { detail: JSON.stringify({ ...detailOf({ ...row, detail }), next_row: next.row.id }) } : {};
		const changes = set || next ? [this.change(row, { lease_until: Date.now() + LEASE_MS, ...set, ...nextRow })] : [];
		let written = false;
		try {
			const [changed = true] = await this.writeWindow(changes);
			// Lost its compare-and-set (a Retry or Recover claimed the row while the POST was out): the task is recorded
			// in a row of its own, and the next item was not marked as sent (found by the review of cb49ba5).
			if (!changed && set?.state === 'accepted') await this.recordApart(row, set);
			if (!changed && next) this.waiters.unshift(next);
			// A `next_row` mark that committed after the hold ran out may come after a Retry paid: not sent (markSent).
			else if (next && this.holdLost()) next.reject(leaseLost(this.ctx, next.itemIndex, next.row));
			else written = true;
		} catch (error) {
			if (set) this.warn(`row ${row.id} not updated to ${JSON.stringify(set.state)}`, error);
			if (set?.state === 'accepted') this.unrecorded.set(row.id, this.change(row, { ...set, lease_until: 0 }));
			next?.reject(error);
		}
		this.holder = written ? next?.itemIndex : undefined;
		this.handing = false;
		if (written && next) next.resolve();
		// Items that came while the write ran, or after a failed one: the first takes the window with its own write.
		else void this.handOn();
	}

	/** An accepted task whose row another run claimed: a row of this run's own, so that its id is in the ledger. */
	private async recordApart(row: LedgerRow, set: IDataObject): Promise<void> {
		const values: IDataObject = {
			workflow_id: row.workflow_id,
			run_key: row.run_key,
			item_key: row.item_key,
			execution_id: this.scope.executionId,
			task_id: '',
			claims: 0,
			lease_until: Date.now() + LEASE_MS,
			detail: row.detail,
			...set,
		};
		try {
			this.rows.push(...(await this.table.insert([values])));
		} catch (error) {
			this.warn(`recording task ${String(set.task_id)} apart`, error);
		}
	}

	/** Nobody holds the window: the first waiter takes it with a write of its own. */
	private async handOn(): Promise<void> {
		while (this.holder === undefined && !this.handing) {
			const next = this.nextWaiter();
			if (!next) return;
			this.holder = next.itemIndex;
			try {
				await this.markSent(next.itemIndex, next.row);
				next.resolve();
				return;
			} catch (error) {
				this.holder = undefined;
				next.reject(error);
			}
		}
	}

	/** Answers, per change, whether it changed its row (a lost compare-and-set changes nothing). */
	private async writeWindow(changes: RowChange[]): Promise<boolean[]> {
		const answers = await this.table.updateEach(BY_CLAIM, changes);
		for (const [changed] of answers) if (changed) this.replace(changed);
		return answers.map((rows) => rows.length > 0);
	}

	private replace(changed: LedgerRow): void {
		this.rows = this.rows.map((entry) => (entry.id === changed.id ? changed : entry));
	}

	private warn(what: string, error: unknown): void {
		this.ctx.logger.warn(`Task Ledger: ${what} failed: ${(error as Error)?.message ?? String(error)}`);
	}

	/**
	 * The node run ended, after the `accepted` writes that failed are tried once more. Its execution goes on and holds
	 * the rows until n8n has saved this run (executionHold.ts): let go now, they read as orphans while the execution
	 * may still hand their tasks on, and Recover listed them (issue 51). A run whose hold ran out lets them go at once
	 * and fails (holdRanOut).
	 */
	async close(): Promise<void> {
		this.renewal.abort();
		await this.renewing;
		if (!this.rows.some((row) => row.execution_id === this.scope.executionId)) return;
		if (this.unrecorded.size > 0) await this.recordAgain();
		const { executionId, nodeName, runIndex } = this.scope;
		if (!this.holdLost()) {
			ExecutionHold.keep(this.ctx, this.table, executionId, { runKey: this.runKey, nodeName, runIndex }, this.heldUntil);
			return;
		}
		await this.table
			.update(HELD, { run_key: this.runKey, execution_id: executionId }, { lease_until: 0 })
			.catch((error: unknown) => this.warn('letting the leases go', error));
		// Another run may have taken this run's tasks once its hold ran out: they go on from one run only (found by the
		// property test: a run that stalled past its lease and a Retry that took its task both handed it on).
		throw holdRanOut(this.ctx);
	}

	/** The `accepted` writes that failed, once more; one whose row another run claimed meanwhile gets a row apart. */
	private async recordAgain(): Promise<void> {
		const changes = [...this.unrecorded.values()];
		const changed = await this.writeWindow(changes).catch((error: unknown) => this.warn('recording again', error));
		if (!changed) return;
		for (const [index, change] of changes.entries()) {
			const row = this.rows.find((entry) => entry.id === Number(change.where.id));
			if (!changed[index] && row) await this.recordApart(row, { ...change.set, lease_until: 0 });
		}
	}

	private resumed(itemIndex: number, row: LedgerRow, named: Set<number> = sentAfter(this.rows)): LedgerSubmission {
		if (inFlight(row, named) || row.state === 'reported' || !row.task_id) {
			throw unknownOutcome(this.ctx, itemIndex, row);
		}
		const submittedAt = Date.parse(String(detailOf(row).submitted_at ?? ''));
		this.tasks.add(row.task_id);
		return { taskId: row.task_id, resumed: true, acceptedAt: Number.isFinite(submittedAt) ? submittedAt : Date.now() };
	}

	/**
	 * On a Retry, before an item takes over or pays: the other executions' rows read again, once per run and again only
	 * after a lease was waited out (time passed: a holder whose lease looked over may have renewed it and be about to
	 * send; found by the ledger's property test, two Retries of one execution both paid). Not once per item: the read
	 * holds every row of the node for all executions of the workflow, and per item it made the Retries of bench:scale's
	 * queue case (twenty items, a thousand rows) so slow that n8n took their jobs for stalled. A holder whose lease ran
	 * out sends nothing more (holdLost), and each adoption reads its row first (untilLeaseEnds). But a row of the item
	 * read while its holder held it is read again once that lease looks over (outdated): the holder may have renewed,
	 * sent or been accepted since (found by the property test: a Retry's third item, a lease after that one read, paid
	 * again what the stalled original had sent meanwhile).
	 */
	private async refreshOthers(itemIndex: number, meta: SubmissionMeta): Promise<void> {
		if (this.refreshedAfter === this.waits && !this.outdated(itemIndex, meta)) return;
		// Counted as read once the read answered, not when it started: an item that comes meanwhile waits for it, and
		// a read that failed is made again by the next item (found by the property test: the item after a failed read
		// took the rows read before a lease wait for fresh, and paid an unknown outcome again).
		if (this.reading?.after === this.waits) return await this.reading.read;
		const after = this.waits;
		const at = Date.now();
		const read = this.table.read([eq('run_key')], { run_key: this.runKey }).then((now) => {
			const own = (row: LedgerRow) => row.execution_id === this.scope.executionId;
			this.rows = [...this.rows.filter(own), ...now.filter((row) => !own(row))];
			this.noteFirstClaims(now);
			this.refreshedAfter = after;
			this.readAt = at;
		});
		this.reading = { after, read };
		try {
			await read;
		} finally {
			if (this.reading?.read === read) this.reading = undefined;
		}
	}

	/** Notes the claims of the other executions' rows this run reads for the first time. */
	private noteFirstClaims(rows: LedgerRow[]): void {
		for (const row of rows) {
			if (row.execution_id === this.scope.executionId || this.firstClaims.has(row.id)) continue;
			this.firstClaims.set(row.id, row.claims);
		}
	}

	/**
	 * Whether another execution's row of this item, as last read, was held then (its lease ran past the read) and its
	 * lease looks over now: only a holder whose lease was over before the read is known to send nothing more (holdLost);
	 * this one may have renewed, marked the item as sent or recorded its task since.
	 */
	private outdated(itemIndex: number, meta: SubmissionMeta): boolean {
		const now = Date.now();
		return this.rows.some(
			(row) => row.lease_until > this.readAt && row.lease_until <= now && this.related(row, itemIndex, meta),
		);
	}

	/**
	 * On a Retry: a dead run's row of the same item, claimed by compare-and-set, when it paid for the same model and
	 * prompt (as far as the row records it). Another execution's input may come in another order: a row of another
	 * request fails the item (nothing paid, nobody handed another item's video).
	 */
	private async adopt(itemIndex: number, meta: SubmissionMeta): Promise<LedgerSubmission | undefined> {
		const named = sentAfter(this.rows);
		const related = this.rows.filter((row) => this.related(row, itemIndex, meta));
		// Rows of the item itself go first, then those at its position with its request and files, then those of identical
		// items: an identical sibling's row taken before the row at the item's position left the sibling without its own
		// (found by the property test: identical items, a middle Retry stamped anew; an item took its sibling's unknown
		// outcome, the sibling paid again).
		const itself = related.filter((row) => this.samePrint(row, itemIndex));
		const tier = (row: LedgerRow) =>
			this.sameItem(row, itemIndex) ? 0 : this.atPosition(row, itemIndex, meta) ? 1 : itself.includes(row) ? 2 : 3;
		const order = (row: LedgerRow) => tier(row) * ADOPTION_ORDER.length + ADOPTION_ORDER.indexOf(row.state);
		const candidates = related.filter((row) => this.mayHaveBeenSent(row, named)).sort((a, b) => order(a) - order(b));
		// Identical items whose requests differ (a prompt from elsewhere) are numbered by their order, which a Retry's
		// input may change: a row of the item's request means the other requests' rows are its siblings' (found by the
		// property test: a reversed input paid an accepted task again), not a prompt edited since.
		const ownRequest = itself.some((row) => samePaid(paidForOf(row), meta));
		let taken: LedgerRow | undefined;
		// A row another run claimed after this run first read it, and handed on.
		let handed: LedgerRow | undefined;
		// A row of the same item that paid for another request: refused only when no row paid for this one.
		let other: { row: LedgerRow; paidFor: SubmissionMeta } | undefined;
		for (const candidate of candidates) {
			// A task this run has handed to an item already (its row taken by another run meanwhile, then let go) is
			// that item's: never a second one's (found by the property test: one task handed to two items).
			if (candidate.task_id && this.tasks.has(candidate.task_id)) continue;
			// Once a row of the item was taken by another run (or claimed too late to use), only rows of the item's own key
			// may stand in for it: a row at its position or of an identical item is another item's task, which that item
			// then no longer finds (found by the property test: a claim answered after its lease fell back to the row at
			// the item's position, re-keyed it, and the item it was paid for paid again).
			if ((taken || handed) && !this.sameItem(candidate, itemIndex)) continue;
			const row = await this.untilLeaseEnds(candidate, true);
			if (!row) {
				taken = candidate;
				continue;
			}
			if (await handedOn(this.ctx, row)) {
				// Another execution's delivered task is another execution's item, and this one pays for its own. But a row
				// another run claimed since this run first read it was taken over while this run went on: by a Retry of this
				// very run (n8n took it for crashed while it stalled) as well as by another execution's Retry; paying now
				// could pay twice (found by the property test: a stalled Retry resumed after its own Retry had delivered
				// the task, and paid again).
				const first = this.firstClaims.get(row.id);
				if (first !== undefined && first !== row.claims) handed ??= row;
				continue;
			}
			const paidFor = paidForOf(row);
			if (!samePaid(paidFor, meta)) {
				if (!ownRequest) other ??= { row, paidFor };
				continue;
			}
			// The row is this item's now, as this run knows it (its key and position): what a Retry of this run meets.
			const leaseUntil = Date.now() + LEASE_MS;
			const [claimed] = await this.table.update(BY_CLAIM, { id: row.id, claims: row.claims }, {
				item_key: this.keys[itemIndex],
				// Under this run's node name: whether the task went on is read from this run's saved data by that name (a
				// Retry with the node renamed since read the old name, found nothing, and Recover listed a delivered task).
				detail: JSON.stringify({ ...detailOf(row), item_index: itemIndex, node_name: this.scope.nodeName }),
				execution_id: this.scope.executionId,
				claims: row.claims + 1,
				lease_until: leaseUntil,
			});
			// A claim whose answer came after its lease ran out may have been taken over since (as markSent's mark).
			if (!claimed || Date.now() >= leaseUntil) {
				taken = row;
				continue;
			}
			this.replace(claimed);
			this.adoptedFor.set(claimed.id, itemIndex);
			// The error of an unknown outcome names the run that died, not this one.
			return this.resumed(itemIndex, { ...claimed, execution_id: row.execution_id }, named);
		}
		// Another live run (a second Retry of the same execution) holds this item's task: paying now could pay twice.
		if (taken) throw takenByAnother(this.ctx, itemIndex, taken);
		if (handed) throw handedOnByAnother(this.ctx, itemIndex, handed);
		if (other) throw anotherRequest(this.ctx, itemIndex, other.row, other.paidFor);
		return undefined;
	}

	/**
	 * Whether another execution's row may be this item's paid request, on a Retry: the same input item (item_key), or
	 * the same position and the same model and prompt. The second is for a Retry whose nodes before Generate ran again
	 * and stamped the item anew (a Set with `{{ $now }}`): its key changed, and the crashed run's task, or its unknown
	 * outcome, must still be met (found by the second review of cb49ba5).
	 */
	private related(row: LedgerRow, itemIndex: number, meta: SubmissionMeta): boolean {
		if (row.execution_id === this.scope.executionId) return false;
		if (this.sameItem(row, itemIndex)) return true;
		if (this.samePrint(row, itemIndex) && samePaid(paidForOf(row), meta)) return true;
		return this.atPosition(row, itemIndex, meta);
	}

	/** Whether a row stands at the item's position with its request and files. */
	private atPosition(row: LedgerRow, itemIndex: number, meta: SubmissionMeta): boolean {
		const detail = detailOf(row);
		// Other files are another item's (a picture with the same prompt: found by the property test).
		const files = detail.files === undefined || detail.files === this.files[itemIndex];
		return Number(detail.item_index) === itemIndex && samePaid(paidForOf(row), meta) && files;
	}

	/**
	 * On a Retry, before paying for an item nobody paid for yet: another execution that planned it and whose lease still
	 * runs may be alive and about to send it (a run n8n took for crashed while it went on). Its lease is waited out once:
	 * a holder that renewed it meanwhile lives, and the item fails with nothing sent (stillHeld); one that marked the
	 * item as sent before it stopped left an unknown outcome for the next Retry to find. Otherwise it is gone without
	 * having sent it, and this run pays.
	 */
	private async notHeldElsewhere(itemIndex: number, meta: SubmissionMeta): Promise<void> {
		// Read again when adopt waited a lease out, or a lease read as running looks over now: a planned row whose lease
		// seemed over may have been sent meanwhile (found by the property test: a stalled holder's item paid again).
		await this.refreshOthers(itemIndex, meta);
		const held = this.rows.filter(
			(row) => this.related(row, itemIndex, meta) && row.state === 'planned' && row.lease_until > Date.now(),
		);
		for (const row of held) {
			if (!(await this.untilLeaseEnds(row))) throw stillHeld(this.ctx, itemIndex, row);
		}
		if (held.length === 0) return;
		// What the holders did meanwhile: a row of theirs for the item that is no longer the planned row read (sent by
		// its own `sending` write, accepted, refused, claimed) or named as sent, or another row of theirs for the item
		// that may have been sent (a late insert): the item may be paid, and it is theirs until they have ended.
		const now = await this.table.read([eq('run_key')], { run_key: this.runKey });
		const named = sentAfter(now);
		const holders = new Set(held.map((row) => row.execution_id));
		const sent =
			held.find((row) => {
				const fresh = now.find((entry) => entry.id === row.id);
				return named.has(row.id) || (fresh !== undefined && (fresh.state !== 'planned' || fresh.claims !== row.claims));
			}) ??
			now.find((row) => this.related(row, itemIndex, meta) && holders.has(row.execution_id) && this.mayHaveBeenSent(row, named));
		if (sent) throw stillHeld(this.ctx, itemIndex, sent);
	}

	/**
	 * A row whose holder's lease still runs: waited out once; a holder that renewed meanwhile is alive (skipped). With
	 * `fresh`, the row is read first: the one this run knows may be old (the item waited for its turn, another
	 * candidate's lease was waited out), and its holder may have renewed and handed its task on since (found by the
	 * property test: a task adopted from a run that delivered it).
	 */
	private async untilLeaseEnds(known: LedgerRow, fresh = false): Promise<LedgerRow | undefined> {
		const row = fresh ? (await this.table.read(BY_ID, { id: known.id }))[0] : known;
		if (!row || row.claims !== known.claims) return undefined;
		const left = row.lease_until - Date.now();
		if (left <= 0) return row;
		this.waits++;
		await waitFor(this.ctx, Math.min(left, LEASE_MS) + 1_000);
		const [now] = await this.table.read(BY_ID, { id: row.id });
		return now && now.claims === row.claims && now.lease_until <= Date.now() ? now : undefined;
	}

	/** While the run lasts, its rows' leases are renewed (one write per node run, not per item). */
	private async renewLeases(): Promise<void> {
		const signal = this.renewal.signal;
		while (!signal.aborted) {
			try {
				await abortableSleep(RENEW_MS, signal);
			} catch {
				return;
			}
			if (this.holdLost()) return;
			const leaseUntil = Date.now() + LEASE_MS;
			await this.table
				.update(HELD, { run_key: this.runKey, execution_id: this.scope.executionId }, { lease_until: leaseUntil })
				.then(() => {
					// A renewal that commits after the hold ran out does not revive it.
					if (!this.holdLost()) this.heldUntil = leaseUntil;
					// The cached rows carry the lease the table has now: the run's later writes must not set it back.
					this.rows = this.rows.map((row) =>
						row.execution_id === this.scope.executionId ? { ...row, lease_until: leaseUntil } : row,
					);
				})
				.catch(() => undefined);
		}
	}
}

/** Opens the run's ledger when the node names a table (empty: no ledger, as before). */
export async function openLedger(
	ctx: IExecuteFunctions,
	tableId: string,
	runIndex: number,
): Promise<TaskLedger | undefined> {
	const id = tableId.trim();
	if (!id) return undefined;
	const node = ctx.getNode();
	const retry = ctx.getMode() === 'retry';
	return await TaskLedger.open(ctx, {
		tableId: id,
		workflowId: String(ctx.getWorkflow().id ?? ''),
		nodeId: node.id,
		nodeName: node.name,
		runIndex: retry ? await retriedRunIndex(ctx, runIndex) : runIndex,
		executionId: ctx.getExecutionId() ?? 'manual',
		retry,
	});
}
