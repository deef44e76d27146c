import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, IRunExecutionData } from 'n8n-workflow';

import type { Lane } from '../transport/lane';
import { abortableSleep } from '../transport/wait';
import { waitFor } from '../transport/transport';
import { maySendAgain } from '../transport/retry';
import { fingerprint } from '../run/submissionGuard';
import { GroupCommit } from './groupCommit';
import { runTable } from './tableRun';
import type { Condition, TableCall, TableOp } from './tableRun';

/**
 * The task ledger: every paid video task is written to an n8n Data Table the moment before it is sent and the moment
 * the service accepts it, so that a worker killed at any point leaves the task's id where every worker and the main
 * can read it. Retry of the crashed execution adopts those tasks instead of paying again; Recover lists those nobody
 * took. The identity, the claim protocol and what each kill leaves: docs/queue-mode.md, docs/design/dead-worker.md.
 */

/**
 * `sending` → `accepted` → `handed` (its id went to the output) / `delivered` (its video too); `refused`: nothing
 * paid; `recovered`: Recover handed its id on; `reported`: an unknown outcome Recover listed.
 */
type LedgerState = 'sending' | 'accepted' | 'handed' | 'delivered' | 'refused' | 'recovered' | 'reported';

export interface LedgerRow {
	id: number;
	workflow_id: string;
	/** workflow/node id/run index: one run of one Generate node. */
	run_key: string;
	/** item index/request fingerprint: one paid request of that run. */
	item_key: string;
	/** The execution holding the row now. */
	execution_id: string;
	state: LedgerState;
	task_id: string;
	/** Epoch ms: the holder is alive until then (it renews while it runs). */
	lease_until: number;
	/** Compare-and-set counter: a claim changes the row only if nobody claimed it since it was read. */
	claims: number;
	/** JSON: node_name, item_index, model, prompt (cut), submitted_at. */
	detail: string;
}

export const LEDGER_COLUMNS = {
	string: ['workflow_id', 'run_key', 'item_key', 'execution_id', 'state', 'task_id', 'detail'],
	number: ['lease_until', 'claims'],
} as const;

/** A holder that stops renewing is taken for dead after this long; it renews every third of it. */
export const LEASE_MS = 60_000;
const RENEW_MS = LEASE_MS / 3;

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

/** An item's row before it is written: its columns, then the insert once it started. */
interface Intent {
	fields: IDataObject;
	row?: Promise<LedgerRow>;
}

export const eq = (column: string): Condition => ({ column, condition: 'eq' });
const BY_ID = [eq('id')];
export const BY_CLAIM = [eq('id'), eq('claims')];
/** The rows one execution holds in one node run. */
const HELD = [eq('run_key'), eq('execution_id')];

const ROW_COLUMNS = [...LEDGER_COLUMNS.string, ...LEDGER_COLUMNS.number];

/** The row as read back (n8n answers numbers as numbers and may answer an empty string as null). */
function toRow(json: IDataObject): LedgerRow {
	const text = (key: string) => (json[key] === null || json[key] === undefined ? '' : String(json[key]));
	const number = (key: string) => Number(json[key] ?? 0) || 0;
	return {
		id: number('id'),
		workflow_id: text('workflow_id'),
		run_key: text('run_key'),
		item_key: text('item_key'),
		execution_id: text('execution_id'),
		state: text('state') as LedgerState,
		task_id: text('task_id'),
		lease_until: number('lease_until'),
		claims: number('claims'),
		detail: text('detail'),
	};
}

export function detailOf(row: LedgerRow): IDataObject {
	try {
		const value = JSON.parse(row.detail) as unknown;
		return value && typeof value === 'object' ? (value as IDataObject) : {};
	} catch {
		return {};
	}
}

/**
 * Which orphans a retry looks at first: tasks known to be paid, then unknown outcomes (also those Recover reported:
 * still never resent), then handed ones (a task Recover took is reused, never paid again).
 */
const ADOPTION_ORDER: LedgerState[] = ['accepted', 'sending', 'reported', 'handed', 'delivered', 'recovered'];

/** The error of an item whose earlier try may have been paid (a `sending` row): never sent again. */
/**
 * The context flag of a ledger error that concerns its item only: the run's other items are paid for and recorded as
 * usual (nothing of theirs is lost: Recover lists what a failing run did not hand on), instead of stopping at it.
 */
export const LEDGER_ITEM_ONLY = 'ledgerItemOnly';

function itemOnly(error: NodeOperationError): NodeOperationError {
	error.context[LEDGER_ITEM_ONLY] = true;
	return error;
}

function unknownOutcome(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(new NodeOperationError(
		ctx.getNode(),
		`Not resubmitted: an earlier run of this item (execution ${row.execution_id}) stopped while its video was being ` +
			`submitted, so the service may already have the task and charge for it.`,
		{
			itemIndex,
			description:
				`Task Ledger row ${row.id} is in state "sending". Check with the service (its task list or your usage) ` +
				'whether the video was created; to pay for it again, set the row\'s state to "refused" and retry.',
		},
	));
}

function takenByAnother(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(new NodeOperationError(
		ctx.getNode(),
		'Not submitted: another run that is still going (a second Retry of the same execution?) took over the task ' +
			`this item paid for earlier (Task Ledger row ${row.id}).`,
		{
			itemIndex,
			description:
				'Nothing was sent, so nothing was paid twice. Let the other run finish, or use Recover once no run holds ' +
				'the task any more.',
		},
	));
}

/**
 * Reads and writes one table through grouped sub-workflow runs, one group per kind of write, one run at a time: a
 * node run's own writes never overlap (n8n 1.x on SQLite without a pool loses count of overlapping ones: tableRun.ts).
 */
export class LedgerTable {
	private readonly groups = new Map<string, GroupCommit<TableCall, IDataObject[]>>();
	private queue: Promise<unknown> = Promise.resolve();

	constructor(
		private readonly ctx: IExecuteFunctions,
		readonly tableId: string,
	) {}

	async read(where: Condition[], values: IDataObject): Promise<LedgerRow[]> {
		const op: TableOp = { kind: 'get', where };
		const rows = await this.inTurn(async () => await runTable(this.ctx, this.tableId, op, [{ where: values }]));
		return rows.map(toRow);
	}

	private async inTurn<T>(work: () => Promise<T>): Promise<T> {
		const turn = this.queue.then(work, work);
		this.queue = turn.catch(() => undefined);
		return await turn;
	}

	async insert(row: IDataObject): Promise<LedgerRow> {
		const [inserted] = await this.group({ kind: 'insert', columns: ROW_COLUMNS }).run({ row });
		if (!inserted) throw new Error('the Data Table answered no row for an insert');
		return toRow(inserted);
	}

	/** The rows this write changed (none: the conditions matched nothing, e.g. a claim that lost its race). */
	async update(where: Condition[], values: IDataObject, set: IDataObject): Promise<LedgerRow[]> {
		const op: TableOp = { kind: 'update', columns: Object.keys(set).sort(), where };
		return (await this.group(op).run({ where: values, set })).map(toRow);
	}

	private group(op: TableOp): GroupCommit<TableCall, IDataObject[]> {
		const name = JSON.stringify(op);
		let group = this.groups.get(name);
		if (!group) {
			group = new GroupCommit(async (calls) => await this.flush(op, calls));
			this.groups.set(name, group);
		}
		return group;
	}

	/** One sub-workflow for all calls; each caller gets the rows of its own call. */
	private async flush(op: TableOp, calls: TableCall[]): Promise<IDataObject[][]> {
		const rows = await this.inTurn(async () => await runTable(this.ctx, this.tableId, op, calls));
		if (op.kind === 'insert') return rows.map((row) => [row]);
		// An update answers the changed rows of all calls together: each call's are those its `where.id` names.
		return calls.map((call) => rows.filter((row) => Number(row.id) === Number(call.where?.id)));
	}
}

/**
 * Whether a row's task went on from its node run: `handed` or `delivered`, and n8n saved that run's output without an
 * error. A run never saved (killed first) or saved as failed (its items never went on) handed nothing on.
 */
export async function handedOn(
	ctx: IExecuteFunctions,
	row: LedgerRow,
	/** Executions read so far (one read per execution, however many of its rows are asked about). */
	reads: Map<string, Promise<IRunExecutionData | undefined>> = new Map(),
): Promise<boolean> {
	if (row.state !== 'handed' && row.state !== 'delivered') return false;
	const nodeName = String(detailOf(row).node_name ?? '');
	const runIndex = Number(row.run_key.split('/').pop());
	let read = reads.get(row.execution_id);
	if (!read) {
		read = ctx.getExecutionDataById(row.execution_id).catch(() => undefined);
		reads.set(row.execution_id, read);
	}
	const saved = await read;
	const run = saved?.resultData?.runData?.[nodeName]?.[runIndex];
	return run !== undefined && run.error === undefined;
}

export class TaskLedger {
	private rows: LedgerRow[] = [];
	/** Rows to write before each item's POST (see lane), by item index. */
	private readonly intents = new Map<number, Intent>();
	/** Items between their row's insert and their `accepted` write: the window (see lane). */
	private readonly unrecorded = new Set<number>();
	private recordedWaiters: Array<() => void> = [];
	private readonly renewal = new AbortController();
	private renewing?: Promise<void>;

	private constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly table: LedgerTable,
		readonly scope: LedgerScope,
	) {}

	get runKey(): string {
		return `${this.scope.workflowId}/${this.scope.nodeId}/${this.scope.runIndex}`;
	}

	/** Reads this node run's rows once (a 1.x worker re-running a job, a Retry: the earlier run's rows are there). */
	static async open(ctx: IExecuteFunctions, scope: LedgerScope): Promise<TaskLedger> {
		const ledger = new TaskLedger(ctx, new LedgerTable(ctx, scope.tableId), scope);
		ledger.rows = await ledger.table.read([eq('run_key')], { run_key: ledger.runKey });
		ledger.renewing = ledger.renewLeases();
		return ledger;
	}

	/**
	 * Pays for one item's request at most once in this execution's lineage: resumes its own row, adopts (on a Retry) a
	 * dead run's row of the same item and request, or writes the row, sends, and records the task id.
	 */
	async submit(
		itemIndex: number,
		request: unknown,
		meta: SubmissionMeta,
		send: () => Promise<string>,
	): Promise<LedgerSubmission> {
		const itemKey = `${itemIndex}/${fingerprint(JSON.stringify(request) ?? '')}`;
		const own = this.rows.find(
			(row) => row.item_key === itemKey && row.execution_id === this.scope.executionId && row.state !== 'refused',
		);
		if (own) return this.resumed(itemIndex, own);
		if (this.scope.retry) {
			const adopted = await this.adopt(itemIndex, itemKey);
			if (adopted) return adopted;
		}
		const detail = {
			node_name: this.scope.nodeName,
			item_index: itemIndex,
			model: meta.model,
			prompt: meta.prompt.slice(0, 200),
		};
		// Written in the item's concurrency slot right before its POST (lane), not now: an item waiting for a slot when
		// the worker dies must not look like a submission whose outcome is unknown.
		const intent: Intent = {
			fields: {
				workflow_id: this.scope.workflowId,
				run_key: this.runKey,
				item_key: itemKey,
				execution_id: this.scope.executionId,
				state: 'sending',
				task_id: '',
				claims: 0,
				detail: JSON.stringify(detail),
			},
		};
		this.intents.set(itemIndex, intent);
		const outcome = await send().then(
			(taskId) => ({ ok: true as const, taskId }),
			(error: unknown) => ({ ok: false as const, error }),
		);
		this.intents.delete(itemIndex);
		const row = await intent.row?.catch(() => undefined);
		if (!outcome.ok) {
			this.recorded(itemIndex);
			// Refused for sure (nothing paid): a retry may pay; otherwise the row stays `sending`, an unknown outcome.
			if (row && maySendAgain(outcome.error)) await this.write(row, { state: 'refused' });
			throw outcome.error;
		}
		const { taskId } = outcome;
		const acceptedAt = Date.now();
		const accepted = {
			state: 'accepted',
			task_id: taskId,
			detail: JSON.stringify({ ...detail, submitted_at: new Date(acceptedAt).toISOString() }),
		};
		if (row) await this.write(row, accepted);
		// Sent outside the ledger's lane (never by Generate): recorded now, late rather than never.
		else await this.insertRow({ ...intent.fields, ...accepted }).catch((error: unknown) => this.warn('insert', error));
		this.recorded(itemIndex);
		return { taskId, resumed: false, acceptedAt };
	}

	/**
	 * The item's submission lane with the ledger's rule: a task is in the unknown-outcome window from its POST until
	 * its `accepted` write commits (a kill then loses its id: the service has it, the ledger does not), so no other
	 * item's POST starts, in its concurrency slot, while one is there. One task at a time per node run is in that
	 * window, however fast the service answers and however slow the database writes; submissions go one after
	 * another (a POST and a ledger write each), waits and downloads in parallel as before.
	 */
	lane(lane: Lane): Lane {
		const { itemIndex } = lane;
		const others = () => [...this.unrecorded].some((index) => index !== itemIndex);
		return {
			itemIndex,
			gate: async (call) =>
				await lane.gate(async () => {
					// Checked and marked with no await between: two lanes never both pass. The row is written after it, so
					// an item still waiting here when the worker dies leaves no `sending` row (a false unknown outcome).
					while (others()) await new Promise<void>((resolve) => this.recordedWaiters.push(resolve));
					this.unrecorded.add(itemIndex);
					await this.rowBeforePost(itemIndex);
					return await call();
				}),
		};
	}

	/** The item's row, written once before its first POST (no row written: no POST). */
	private async rowBeforePost(itemIndex: number): Promise<void> {
		const intent = this.intents.get(itemIndex);
		if (!intent) return;
		intent.row ??= this.insertRow({ ...intent.fields, lease_until: Date.now() + LEASE_MS });
		await intent.row;
	}

	private async insertRow(fields: IDataObject): Promise<LedgerRow> {
		const row = await this.table.insert({ lease_until: Date.now() + LEASE_MS, ...fields });
		this.rows.push(row);
		return row;
	}

	private warn(what: string, error: unknown): void {
		this.ctx.logger.warn(`Task Ledger: ${what} failed: ${(error as Error)?.message ?? String(error)}`);
	}

	private recorded(itemIndex: number): void {
		if (!this.unrecorded.delete(itemIndex)) return;
		const waiters = this.recordedWaiters;
		this.recordedWaiters = [];
		for (const wake of waiters) wake();
	}

	/**
	 * The item's task left this node: its id in the output (`handed`) or its video too (`delivered`). The task id is
	 * written again: it repairs a row whose `accepted` write failed.
	 */
	async settled(itemIndex: number, taskId: string, state: 'handed' | 'delivered'): Promise<void> {
		const row = this.rows.find(
			(entry) =>
				entry.execution_id === this.scope.executionId &&
				(entry.task_id === taskId || (entry.task_id === '' && entry.item_key.startsWith(`${itemIndex}/`))),
		);
		if (row && (row.state !== state || row.task_id !== taskId)) await this.write(row, { state, task_id: taskId });
	}

	/** The run ended: leases stop, and a failed run's rows can be adopted by a Retry at once. */
	async close(): Promise<void> {
		this.renewal.abort();
		await this.renewing;
		const held = this.rows.filter((row) => row.execution_id === this.scope.executionId);
		if (held.length === 0) return;
		await this.table
			.update(HELD, { run_key: this.runKey, execution_id: this.scope.executionId }, { lease_until: 0 })
			.catch(() => undefined);
	}

	private resumed(itemIndex: number, row: LedgerRow): LedgerSubmission {
		if (row.state === 'sending' || row.state === 'reported' || !row.task_id) {
			throw unknownOutcome(this.ctx, itemIndex, row);
		}
		const submittedAt = Date.parse(String(detailOf(row).submitted_at ?? ''));
		return { taskId: row.task_id, resumed: true, acceptedAt: Number.isFinite(submittedAt) ? submittedAt : Date.now() };
	}

	/** On a Retry: a dead run's row of the same item and request, claimed by compare-and-set. */
	private async adopt(itemIndex: number, itemKey: string): Promise<LedgerSubmission | undefined> {
		const candidates = this.rows
			.filter((row) => row.item_key === itemKey && row.execution_id !== this.scope.executionId)
			.filter((row) => ADOPTION_ORDER.includes(row.state))
			.sort((a, b) => ADOPTION_ORDER.indexOf(a.state) - ADOPTION_ORDER.indexOf(b.state));
		let taken: LedgerRow | undefined;
		for (const candidate of candidates) {
			const row = await this.untilLeaseEnds(candidate);
			if (!row) {
				taken = candidate;
				continue;
			}
			if (!(await this.orphaned(row))) continue;
			const [claimed] = await this.table.update(BY_CLAIM, { id: row.id, claims: row.claims }, {
				execution_id: this.scope.executionId,
				claims: row.claims + 1,
				lease_until: Date.now() + LEASE_MS,
			});
			if (!claimed) {
				taken = row;
				continue;
			}
			this.rows = this.rows.map((entry) => (entry.id === claimed.id ? claimed : entry));
			// The error of an unknown outcome names the run that died, not this one.
			return this.resumed(itemIndex, { ...claimed, execution_id: row.execution_id });
		}
		// Another live run (a second Retry of the same execution) holds this item's task: paying now could pay twice.
		if (taken) throw takenByAnother(this.ctx, itemIndex, taken);
		return undefined;
	}

	/** A row whose holder's lease still runs: waited out once; a holder that renewed meanwhile is alive (skipped). */
	private async untilLeaseEnds(row: LedgerRow): Promise<LedgerRow | undefined> {
		const left = row.lease_until - Date.now();
		if (left <= 0) return row;
		await waitFor(this.ctx, Math.min(left, LEASE_MS) + 1_000);
		const [now] = await this.table.read(BY_ID, { id: row.id });
		return now && now.claims === row.claims && now.lease_until <= Date.now() ? now : undefined;
	}

	private async orphaned(row: LedgerRow): Promise<boolean> {
		return !(await handedOn(this.ctx, row));
	}

	/** A write after the service answered: failing it must not lose the task (the row keeps its last state). */
	private async write(row: LedgerRow, set: IDataObject): Promise<void> {
		try {
			const [changed] = await this.table.update(BY_ID, { id: row.id }, set);
			if (changed) this.rows = this.rows.map((entry) => (entry.id === row.id ? changed : entry));
		} catch (error) {
			const to = JSON.stringify(set.state ?? set);
			this.ctx.logger.warn(`Task Ledger: row ${row.id} not updated to ${to}: ${(error as Error).message}`);
		}
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
			await this.table
				.update(
					HELD,
					{ run_key: this.runKey, execution_id: this.scope.executionId },
					{ lease_until: Date.now() + LEASE_MS },
				)
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
	return await TaskLedger.open(ctx, {
		tableId: id,
		workflowId: String(ctx.getWorkflow().id ?? ''),
		nodeId: node.id,
		nodeName: node.name,
		runIndex,
		executionId: ctx.getExecutionId() ?? 'manual',
		retry: ctx.getMode() === 'retry',
	});
}
