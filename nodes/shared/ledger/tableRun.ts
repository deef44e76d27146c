import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, IWorkflowBase } from 'n8n-workflow';

/**
 * Reads and writes one of n8n's Data Tables from a community node. n8n's Data Table proxy answers only n8n's own Data
 * Table nodes ("This proxy is only available for Data table nodes", n8n 1.123 and 2.41), so the node runs n8n's Data
 * Table node in an inline sub-workflow (Execute Workflow Trigger → Data Table), the route n8n's own Execute Workflow
 * node takes for a workflow given as JSON. The table lives in n8n's database: every worker and the main see a write
 * at once, and it outlives the process that wrote it (docs/design/dead-worker.md §1).
 */

/** A condition on a column (the Data Table node's `eq`, `lt`…); values come from each input item's `where`. */
export interface Condition {
	column: string;
	condition: 'eq' | 'neq' | 'lt' | 'lte' | 'gt' | 'gte';
}

export type TableOp =
	/** Inserts each input item's `row` (its `columns`); answers the inserted rows (with their `id`), in input order. */
	| { kind: 'insert'; columns: string[] }
	/** Per input item: sets `set`'s columns on the rows matching all `where` conditions; answers the changed rows. */
	| { kind: 'update'; columns: string[]; where: Condition[] }
	/** The rows matching all conditions (values from the first input item's `where`). */
	| { kind: 'get'; where: Condition[] };

export interface TableCall {
	row?: IDataObject;
	set?: IDataObject;
	where?: IDataObject;
}

/** The Data Table node's version both lines have (n8n 1.123: 1; 2.41: 1, 1.1). Its parameters are pinned to it. */
const DATA_TABLE_VERSION = 1;

const valueOf = (path: string, column: string) => `={{ $json.${path}[${JSON.stringify(column)}] }}`;

/**
 * A value written into the sub-workflow as it is, not as an expression: n8n 2.x evaluates expressions in isolates
 * (its default engine, `vm`), and an execution that evaluates none needs no isolate when n8n acquires them lazily
 * (N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE): building one per write was most of a write's CPU (docs/queue-mode.md, What to
 * set). n8n takes a string that starts with `=` for an expression: such a value (a task id is the service's to
 * choose), and anything but a plain string, number or boolean, is read from the input item instead, never evaluated
 * as written.
 */
function literal(values: IDataObject | undefined, path: 'set' | 'where', column: string): unknown {
	const value = values?.[column];
	// Only a plain value: n8n would evaluate a `=` string nested in an object, and fills a missing condition with ''.
	const plain =
		(typeof value === 'string' && !value.startsWith('=')) ||
		(typeof value === 'number' && Number.isFinite(value)) ||
		typeof value === 'boolean';
	return plain ? value : valueOf(path, column);
}

/** One call: its values in the parameters. Several: each item's from its own json (one expression per value). */
function columnsParameter(columns: string[], single: TableCall | undefined): IDataObject {
	const value = (column: string) => (single ? literal(single.set, 'set', column) : valueOf('set', column));
	return { mappingMode: 'defineBelow', value: Object.fromEntries(columns.map((column) => [column, value(column)])) };
}

function filterParameters(where: Condition[], single: TableCall | undefined): IDataObject {
	return {
		matchType: 'allConditions',
		filters: {
			conditions: where.map(({ column, condition }) => ({
				keyName: column,
				condition,
				keyValue: single ? literal(single.where, 'where', column) : valueOf('where', column),
			})),
		},
	};
}

function operationParameters(op: TableOp, calls: TableCall[]): IDataObject {
	// A get reads the first item's conditions only (executeOnce).
	const single = calls.length === 1 || op.kind === 'get' ? calls[0] : undefined;
	switch (op.kind) {
		case 'insert':
			// Each input item is its row, as it is: nothing to evaluate however many rows.
			return { operation: 'insert', columns: { mappingMode: 'autoMapInputData', value: null } };
		case 'update':
			return { operation: 'update', columns: columnsParameter(op.columns, single), ...filterParameters(op.where, single) };
		case 'get':
			return { operation: 'get', returnAll: true, ...filterParameters(op.where, single) };
	}
}

/**
 * The sub-workflow's input items: an insert's rows themselves, else each call (read by the values left to it).
 * Exported for the tests that run tableWorkflow() themselves.
 */
export const inputItems = (op: TableOp, calls: TableCall[]) =>
	calls.map((call) => ({ json: op.kind === 'insert' ? rowOf(op.columns, call) : (call as IDataObject) }));

/** An insert's row: the op's columns only (auto-mapping would send any other key, and fail on it). */
const rowOf = (columns: string[], call: TableCall): IDataObject =>
	Object.fromEntries(columns.map((column) => [column, call.row?.[column]]));

/**
 * The inline sub-workflow for one operation on one table and its calls' values (exported for the tests that run it
 * in a real n8n).
 */
export function tableWorkflow(tableId: string, op: TableOp, calls: TableCall[] = []): IWorkflowBase {
	const trigger = 'Ledger Input';
	const table = 'Ledger Table';
	return {
		id: '',
		name: 'Gen Gateway task ledger',
		active: false,
		isArchived: false,
		createdAt: new Date(0),
		updatedAt: new Date(0),
		nodes: [
			{
				id: 'a1b2c3d4-0000-4000-8000-000000000001',
				name: trigger,
				type: 'n8n-nodes-base.executeWorkflowTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'a1b2c3d4-0000-4000-8000-000000000002',
				name: table,
				type: 'n8n-nodes-base.dataTable',
				typeVersion: DATA_TABLE_VERSION,
				position: [220, 0],
				// A get for the first item only: the conditions are the same for every caller of one read.
				...(op.kind === 'get' ? { executeOnce: true } : {}),
				parameters: {
					resource: 'row',
					dataTableId: { __rl: true, mode: 'id', value: tableId },
					...operationParameters(op, calls),
				},
			},
		],
		connections: { [trigger]: { main: [[{ node: table, type: 'main', index: 0 }]] } },
		// Its own settings: nothing of a successful ledger write is kept in the executions list. The caller policy
		// n8n 1.x, 2.x and 3.x all accept: n8n gives inline code its caller's workflow id, so "same owner" always holds
		// ("any", set here before, is gone in n8n 3.0; left unset, an instance whose default is "none" would refuse it).
		settings: {
			callerPolicy: 'workflowsFromSameOwner',
			saveDataSuccessExecution: 'none',
			saveManualExecutions: false,
			saveExecutionProgress: false,
		},
	} as unknown as IWorkflowBase;
}

/** A pooled SQLite refused a write for another's (its transaction rolled back, nothing kept): run it again. */
const BUSY = /SQLITE_BUSY|database is locked/i;

/**
 * n8n's Data Table node reads a table in pages and gives up when another run's write changed the count between two
 * pages (2.41.1: "synchronization error: result count changed during pagination"). A read changes nothing: read again
 * (found by bench:scale's queue case: a Retry reading the ledger while fifty executions wrote it failed its batch).
 */
const CHANGED_WHILE_READ = /result count changed during pagination/i;

/** Runs of one operation before a busy database fails it. */
export const TABLE_ATTEMPTS = 5;

/**
 * n8n 1.x on SQLite without a pool (DB_SQLITE_POOL_SIZE 0, that line's default: one connection for all) loses count
 * when two transactions overlap (a run's ledger write and the editor showing a Data Table, or another run's Data
 * Table node): "Transaction is not started yet". From then on its writes go into a transaction nothing commits, and a
 * crash or restart loses them (measured on 1.123.81: rows the table showed were gone after the restart). Never run
 * again: the ledger would only seem to hold what it wrote.
 */
const LOST_COUNT = /Transaction is not started yet|cannot start a transaction within a transaction/i;

const UNPOOLED_SQLITE =
	' n8n\'s SQLite connection without a pool (n8n 1.x\'s default) ran two database transactions at once and lost ' +
	'track of them: what n8n writes from now on may be lost when it stops. Restart n8n, and set DB_SQLITE_POOL_SIZE ' +
	'(3 is n8n 2.x\'s default) or use PostgreSQL before using the Task Ledger again.';

/** Runs one operation for the given input items; answers the Data Table node's output items' json. */
export async function runTable(
	ctx: IExecuteFunctions,
	tableId: string,
	op: TableOp,
	calls: TableCall[],
): Promise<IDataObject[]> {
	// Written into the sub-workflow as it is: n8n would evaluate an id that starts with `=` (from an expression's value).
	if (tableId.startsWith('=')) throw tableError(ctx, tableId, op, 'a Data Table ID never starts with "="', '');
	for (let attempt = 1; ; attempt++) {
		try {
			const answer = await ctx.executeWorkflow(
				{ code: tableWorkflow(tableId, op, calls) },
				inputItems(op, calls),
				undefined,
				{ parentExecution: { executionId: ctx.getExecutionId(), workflowId: ctx.getWorkflow().id ?? '' } },
			);
			return (answer.data?.[0] ?? []).map((item) => item.json);
		} catch (error) {
			const message = (error as Error)?.message ?? String(error);
			const again = BUSY.test(message) || (op.kind === 'get' && CHANGED_WHILE_READ.test(message));
			if (again && attempt < TABLE_ATTEMPTS) continue;
			const why = LOST_COUNT.test(message) ? UNPOOLED_SQLITE : '';
			throw tableError(ctx, tableId, op, attempt > 1 ? `${message} (${attempt} attempts)` : message, why);
		}
	}
}

/** The item's error: what failed, the table's shape, and what to change when the database lost count. */
function tableError(ctx: IExecuteFunctions, tableId: string, op: TableOp, message: string, why: string) {
	const verb = op.kind === 'get' ? 'read' : 'written';
	return new NodeOperationError(ctx.getNode(), `Task Ledger: the Data Table ${tableId} could not be ${verb}: ${message}`, {
		description:
			'The Task Ledger is an n8n Data Table with the columns workflow_id, run_key, item_key, execution_id, state, ' +
			'task_id, detail (string) and lease_until, claims (number); see docs/queue-mode.md. Nothing was paid ' +
			'after this failure.' +
			why,
	});
}
