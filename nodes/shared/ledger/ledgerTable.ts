import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { GroupCommit } from './groupCommit';
import { runTable } from './tableRun';
import type { Condition, TableCall, TableOp } from './tableRun';

/**
 * `planned` (nothing sent yet) → `sending` → `accepted` (paid, its id recorded); `refused`: nothing paid;
 * `recovered`: Recover handed its id on; `reported`: an unknown outcome Recover listed. A `planned` row that another
 * row of its run names as `next_row` in its detail was sent after it (see TaskLedger.lane): it counts as `sending`.
 */
export type LedgerState = 'planned' | 'sending' | 'accepted' | 'refused' | 'recovered' | 'reported';

export interface LedgerRow {
	id: number;
	workflow_id: string;
	/** workflow/node id/run index: one run of one Generate node. */
	run_key: string;
	/** The input item (taskLedger.ts itemKeys): a fingerprint of its JSON and files, and its occurrence among identical ones. */
	item_key: string;
	/** The execution holding the row now. */
	execution_id: string;
	state: LedgerState;
	task_id: string;
	/** Epoch ms: the holder is alive until then (it renews while it runs). */
	lease_until: number;
	/** Compare-and-set counter: a claim changes the row only if nobody claimed it since it was read. */
	claims: number;
	/** JSON: node_name, item_index, model, prompt (cut), submitted_at, next_row (the row sent after this one). */
	detail: string;
}

export const LEDGER_COLUMNS = {
	string: ['workflow_id', 'run_key', 'item_key', 'execution_id', 'state', 'task_id', 'detail'],
	number: ['lease_until', 'claims'],
} as const;

const ROW_COLUMNS = [...LEDGER_COLUMNS.string, ...LEDGER_COLUMNS.number];

export const eq = (column: string): Condition => ({ column, condition: 'eq' });
export const BY_ID = [eq('id')];
export const BY_CLAIM = [eq('id'), eq('claims')];

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

/** The ids of the rows another row names as sent after it (`next_row`): those count as `sending` while `planned`. */
export function sentAfter(rows: LedgerRow[]): Set<number> {
	const ids = new Set<number>();
	for (const row of rows) {
		const next = Number(detailOf(row).next_row);
		if (Number.isInteger(next) && next > 0) ids.add(next);
	}
	return ids;
}

/** Whether the service may have this row's request with no task id recorded: an unknown outcome. */
export function inFlight(row: LedgerRow, named: Set<number>): boolean {
	return row.state === 'sending' || (row.state === 'planned' && named.has(row.id));
}

/** One row's change: which row (`where`), what to set. */
export interface RowChange {
	where: IDataObject;
	set: IDataObject;
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

	/** Inserts the rows in one sub-workflow run; answers them (with n8n's ids) in the same order. */
	async insert(rows: IDataObject[]): Promise<LedgerRow[]> {
		const group = this.group({ kind: 'insert', columns: ROW_COLUMNS });
		const inserted = await group.runAll(rows.map((row) => ({ row })));
		return inserted.map((answer) => {
			if (!answer[0]) throw new Error('the Data Table answered no row for an insert');
			return toRow(answer[0]);
		});
	}

	/** The rows this write changed (none: the conditions matched nothing, e.g. a claim that lost its race). */
	async update(where: Condition[], values: IDataObject, set: IDataObject): Promise<LedgerRow[]> {
		const [changed] = await this.updateEach(where, [{ where: values, set }]);
		return changed;
	}

	/**
	 * Several rows' changes in one sub-workflow run, applied in order; each change's `set` names the same columns.
	 * Answers the rows each change touched.
	 */
	async updateEach(where: Condition[], changes: RowChange[]): Promise<LedgerRow[][]> {
		if (changes.length === 0) return [];
		const op: TableOp = { kind: 'update', columns: Object.keys(changes[0].set).sort(), where };
		const answers = await this.group(op).runAll(changes.map(({ where: values, set }) => ({ where: values, set })));
		return answers.map((rows) => rows.map(toRow));
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
		// An update answers the changed rows of all calls together, in call order: each call's is the next one its
		// `where.id` names. Two compare-and-sets of one row in one run: the second matched nothing and gets nothing
		// (both got the row, and both claimed it: found by the ledger's property test, one task handed to two items).
		const unused = [...rows];
		return calls.map((call) => {
			const index = unused.findIndex((row) => Number(row.id) === Number(call.where?.id));
			return index < 0 ? [] : unused.splice(index, 1);
		});
	}
}
