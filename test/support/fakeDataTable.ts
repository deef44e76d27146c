import type {
	ExecuteWorkflowData,
	ExecuteWorkflowOptions,
	IDataObject,
	IExecuteWorkflowInfo,
	INode,
	INodeExecutionData,
	IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';

/**
 * An n8n Data Table in memory, behind what `ctx.executeWorkflow({ code }, items)` does for the inline sub-workflows
 * of nodes/shared/ledger/tableRun.ts (Execute Workflow Trigger → Data Table node, typeVersion 1). It reads the Data
 * Table node's parameters as n8n would: a value as written, a `={{ $json.<path>["col"] }}` expression evaluated
 * against each input item, an auto-mapped item as its row; and answers as the node does: insert → the inserted rows
 * with increasing ids, in input order; update → per item, the rows matching all conditions, changed; get
 * (executeOnce) → the rows matching all conditions of the first item.
 * Anything else it does not know fails loudly, so a change in what the ledger sends cannot pass unnoticed.
 */

export type FakeOpKind = 'insert' | 'update' | 'get';

export interface FakeCall {
	kind: FakeOpKind;
	/** The input items' json, as the sub-workflow got them. */
	items: IDataObject[];
}

/** Runs before an operation touches the rows: may change them (a concurrent writer) or throw (the run fails). */
export type BeforeHook = (call: FakeCall, table: FakeDataTable) => void | Promise<void>;

export interface TableSchema {
	string: readonly string[];
	number: readonly string[];
}

type Condition = { keyName: string; condition: string; keyValue: unknown };

const EXPRESSION = /^=\{\{ \$json\.(\w+)\[("(?:[^"\\]|\\.)*")\] \}\}$/;

/**
 * A parameter's value for one item, as n8n takes it: a string that starts with `=` is an expression (only
 * `={{ $json.a["b"] }}` is understood, anything else refused), any other value is itself.
 */
function evaluate(expression: unknown, json: IDataObject): unknown {
	if (expression === null || expression === undefined || typeof expression === 'object') {
		// n8n fills a missing value with the parameter's default and evaluates what an object holds: never sent.
		throw new Error(`fakeDataTable: unsupported literal ${JSON.stringify(expression)}`);
	}
	if (typeof expression !== 'string' || !expression.startsWith('=')) return expression;
	const match = EXPRESSION.exec(expression);
	if (!match) throw new Error(`fakeDataTable: unsupported parameter value ${JSON.stringify(expression)}`);
	const holder = json[match[1]] as IDataObject | undefined;
	return holder?.[JSON.parse(match[2]) as string];
}

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export class FakeDataTable {
	readonly rows: IDataObject[] = [];
	readonly calls: FakeCall[] = [];
	/** Run in order before every operation. */
	readonly before: BeforeHook[] = [];
	private nextId = 1;
	private nextExecution = 1;

	constructor(
		readonly tableId: string,
		private readonly schema: TableSchema,
	) {}

	/** The ledger's `ctx.executeWorkflow` (IExecuteFunctions' signature). */
	executeWorkflow = async (
		workflowInfo: IExecuteWorkflowInfo,
		inputData: INodeExecutionData[] = [],
	): Promise<ExecuteWorkflowData> => {
		const node = this.tableNode(workflowInfo);
		const parameters = node.parameters as IDataObject;
		const kind = parameters.operation as FakeOpKind;
		if (!['insert', 'update', 'get'].includes(kind)) throw new Error(`fakeDataTable: unknown operation ${String(kind)}`);
		const call: FakeCall = { kind, items: inputData.map((item) => copy(item.json)) };
		this.calls.push(call);
		for (const hook of this.before) await hook(call, this);
		const update = (json: IDataObject) =>
			this.updateRows(this.conditionsOf(parameters, json), this.valuesOf(parameters, json));
		const answer =
			kind === 'insert'
				? call.items.map((json) => this.insertRow(this.valuesOf(parameters, json)))
				: kind === 'update'
					? call.items.flatMap(update)
					: this.getRows(parameters, node, call.items);
		return { executionId: `fake-sub-${this.nextExecution++}`, data: [answer.map((row) => ({ json: copy(row) }))] };
	};

	/** The same, as n8n's engine calls it (additionalData.executeWorkflow), for the n8n-core harness. */
	engineExecuteWorkflow = async (
		workflowInfo: IExecuteWorkflowInfo,
		_additionalData: IWorkflowExecuteAdditionalData,
		options: ExecuteWorkflowOptions,
	): Promise<ExecuteWorkflowData> => await this.executeWorkflow(workflowInfo, options.inputData);

	/** Runs `hook` before the next operation of `kind` only. */
	beforeNext(kind: FakeOpKind, hook: BeforeHook): void {
		let done = false;
		this.before.push(async (call, table) => {
			if (done || call.kind !== kind) return;
			done = true;
			await hook(call, table);
		});
	}

	/** The sub-workflow runs of one kind (or all). */
	count(kind?: FakeOpKind): number {
		return this.calls.filter((call) => kind === undefined || call.kind === kind).length;
	}

	/** A row as a test sets it up (an earlier execution's), with the next id. */
	seed(values: IDataObject): IDataObject {
		return this.insertRow(values);
	}

	row(id: number): IDataObject | undefined {
		return this.rows.find((row) => row.id === id);
	}

	private tableNode(workflowInfo: IExecuteWorkflowInfo): INode {
		const code = workflowInfo.code;
		if (!code || workflowInfo.id) throw new Error('fakeDataTable: only an inline sub-workflow ({ code }) is supported');
		const [trigger, node, ...more] = code.nodes;
		if (trigger?.type !== 'n8n-nodes-base.executeWorkflowTrigger' || more.length > 0) {
			throw new Error('fakeDataTable: expected Execute Workflow Trigger → Data Table, nothing else');
		}
		const connected = code.connections[trigger.name]?.main?.[0]?.[0]?.node;
		if (node?.type !== 'n8n-nodes-base.dataTable' || node.typeVersion !== 1 || connected !== node.name) {
			throw new Error(`fakeDataTable: expected a connected Data Table node v1, got ${node?.type} v${node?.typeVersion}`);
		}
		const parameters = node.parameters as IDataObject;
		const table = parameters.dataTableId as IDataObject;
		if (parameters.resource !== 'row' || table?.__rl !== true || table.mode !== 'id') {
			throw new Error(`fakeDataTable: unsupported parameters ${JSON.stringify(parameters)}`);
		}
		if (table.value !== this.tableId) throw new Error(`Could not find the data table ${String(table.value)}`);
		return node;
	}

	private typeOf(column: string): 'string' | 'number' {
		if (column === 'id' || this.schema.number.includes(column)) return 'number';
		if (this.schema.string.includes(column)) return 'string';
		throw new Error(`fakeDataTable: unknown column "${column}"`);
	}

	/** The `columns` mapping evaluated for one item; every value typed as its column is. */
	private valuesOf(parameters: IDataObject, json: IDataObject): IDataObject {
		const columns = parameters.columns as IDataObject | undefined;
		// Auto-map: the item is the row, as it is (n8n drops its own columns id, createdAt and updatedAt).
		const automatic = columns?.mappingMode === 'autoMapInputData';
		if (!automatic && columns?.mappingMode !== 'defineBelow') throw new Error('fakeDataTable: unknown columns mapping');
		const mapping = automatic ? copy(json) : (columns.value as IDataObject);
		if (automatic) for (const own of ['id', 'createdAt', 'updatedAt']) delete mapping[own];
		const values: IDataObject = {};
		for (const [column, expression] of Object.entries(mapping)) {
			const value = automatic ? expression : evaluate(expression, json);
			if (column === 'id' || typeof value !== this.typeOf(column)) {
				throw new Error(`fakeDataTable: column "${column}" cannot take ${JSON.stringify(value)}`);
			}
			values[column] = value as IDataObject[string];
		}
		return values;
	}

	private conditionsOf(parameters: IDataObject, json: IDataObject): Condition[] {
		const filters = parameters.filters as { conditions?: Array<Record<string, unknown>> } | undefined;
		const conditions = filters?.conditions ?? [];
		if (parameters.matchType !== 'allConditions' || conditions.length === 0) {
			throw new Error(`fakeDataTable: expected all of at least one condition, got ${JSON.stringify(parameters)}`);
		}
		return conditions.map(({ keyName, condition, keyValue }) => {
			const value = evaluate(keyValue, json);
			if (condition !== 'eq' || value === undefined) {
				const text = `${String(keyName)} ${String(condition)} ${JSON.stringify(value)}`;
				throw new Error(`fakeDataTable: unsupported condition ${text}`);
			}
			this.typeOf(String(keyName));
			return { keyName: String(keyName), condition, keyValue: value };
		});
	}

	private matches(row: IDataObject, conditions: Condition[]): boolean {
		return conditions.every(({ keyName, keyValue }) =>
			this.typeOf(keyName) === 'number' ? Number(row[keyName]) === Number(keyValue) : row[keyName] === String(keyValue),
		);
	}

	private insertRow(values: IDataObject): IDataObject {
		const now = new Date().toISOString();
		const row = { id: this.nextId++, ...values, createdAt: now, updatedAt: now };
		this.rows.push(row);
		return row;
	}

	private updateRows(conditions: Condition[], values: IDataObject): IDataObject[] {
		const changed = this.rows.filter((row) => this.matches(row, conditions));
		for (const row of changed) Object.assign(row, values, { updatedAt: new Date().toISOString() });
		return changed;
	}

	private getRows(parameters: IDataObject, node: INode, items: IDataObject[]): IDataObject[] {
		if (node.executeOnce !== true || parameters.returnAll !== true) {
			throw new Error('fakeDataTable: a get must run once and return all rows');
		}
		if (items.length === 0) return [];
		const conditions = this.conditionsOf(parameters, items[0]);
		return this.rows.filter((row) => this.matches(row, conditions));
	}
}
