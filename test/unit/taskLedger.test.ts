// The task ledger (issue 30, nodes/shared/ledger/) against an in-memory Data Table (test/support/fakeDataTable.ts)
// behind a minimal execute context: identity, own rows resumed, Retry adopting orphans by compare-and-set, refusals,
// failed writes, group commit, close and lease renewal. The real n8n run is test/e2e/ledger.e2e.test.ts.
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, IRunExecutionData } from 'n8n-workflow';

import { GroupCommit } from '../../nodes/shared/ledger/groupCommit';
import { recoverTasks } from '../../nodes/shared/ledger/recovery';
import { inputItems, runTable, TABLE_ATTEMPTS, tableWorkflow } from '../../nodes/shared/ledger/tableRun';
import type { TableOp } from '../../nodes/shared/ledger/tableRun';
import { ExecutionHold, RENEW_MS } from '../../nodes/shared/ledger/executionHold';
import { LEDGER_COLUMNS } from '../../nodes/shared/ledger/ledgerTable';
import { itemKeys, LEASE_MS, openLedger } from '../../nodes/shared/ledger/taskLedger';
import type { TaskLedger } from '../../nodes/shared/ledger/taskLedger';
import { OUTCOME_UNKNOWN } from '../../nodes/shared/transport/errors';
import type { Lane } from '../../nodes/shared/transport/lane';
import { FakeDataTable } from '../support/fakeDataTable';
import type { FakeCall } from '../support/fakeDataTable';

const TABLE = 'tblLedger0001';
const NODE = { id: 'node-gen-1', name: 'Generate Video' };
const WORKFLOW = 'wfLedger01';
const FOX = { model: 'sd_2.0_fast_discount', prompt: 'a fox', duration: 5 };
const META = { model: FOX.model, prompt: FOX.prompt };

interface Context {
	ctx: IExecuteFunctions;
	warnings: string[];
}

interface RunOptions {
	mode?: string;
	runIndex?: number;
	/** The run data n8n has saved, per execution. */
	saved?: Record<string, IRunExecutionData>;
	/** The node's input items' JSON (what each item's `item_key` is made of); by default item i is `{ item: i }`. */
	inputs?: IDataObject[];
	/** The node's name in this execution's workflow (its id stays NODE.id). */
	nodeName?: string;
	/** n8n's cancel signal of the execution: one per execution run (none: each run of the node on its own). */
	signal?: AbortSignal;
}

const INPUTS = Array.from({ length: 8 }, (_, item) => ({ item }));
/** The default inputs' item keys, by item index. */
const KEYS = itemKeys(INPUTS.map((json) => ({ json })));

/** What TaskLedger asks of n8n's execute context, no more. */
function contextFor(
	table: FakeDataTable,
	executionId: string,
	{ mode = 'manual', saved = {}, inputs = INPUTS, nodeName = NODE.name, signal }: RunOptions,
): Context {
	const warnings: string[] = [];
	const ctx = {
		getNode: () => ({ ...NODE, name: nodeName, type: 'genGatewayVideo', typeVersion: 1, position: [0, 0], parameters: {} }),
		getExecutionId: () => executionId,
		getWorkflow: () => ({ id: WORKFLOW, name: 'Ledger', active: false }),
		getMode: () => mode,
		getInputData: () => inputs.map((json) => ({ json })),
		executeWorkflow: table.executeWorkflow,
		getExecutionDataById: async (id: string) => saved[id],
		getExecutionCancelSignal: () => signal,
		logger: { warn: (message: string) => warnings.push(message), debug() {}, info() {}, error() {} },
	};
	return { ctx: ctx as unknown as IExecuteFunctions, warnings };
}

async function open(table: FakeDataTable, executionId: string, options: RunOptions = {}) {
	const { ctx, warnings } = contextFor(table, executionId, options);
	const ledger = (await openLedger(ctx, TABLE, options.runIndex ?? 0)) as TaskLedger;
	return { ledger, warnings };
}

/** A send that answers task ids in order and counts its calls. */
function sender(...taskIds: string[]) {
	const sent: string[] = [];
	const send = async () => {
		const taskId = taskIds[sent.length] ?? `task_${sent.length}`;
		sent.push(taskId);
		return taskId;
	};
	return { send, sent };
}

const direct: Lane['gate'] = async (call) => await call();

/** Submits as Generate does: the POST (send) in the item's lane of the ledger, which writes the row before it. */
async function submitIn(
	ledger: TaskLedger,
	itemIndex: number,
	request: IDataObject,
	meta: typeof META,
	send: () => Promise<string>,
) {
	// The body counts for nothing in a task's identity; its prompt is what the row records.
	const recorded = { ...meta, prompt: String(request.prompt ?? meta.prompt) };
	return await ledger.submit(recorded, { itemIndex, gate: direct }, async (lane) => await lane.gate(send));
}

/** Whether a table call writes a row's `accepted` state. */
const accepts = (call: FakeCall) => call.items.some((item) => (item.set as IDataObject)?.state === 'accepted');

/** The first write of an `accepted` state fails (the database went away after the service answered). */
function failAccepted(table: FakeDataTable): void {
	let failed = false;
	table.before.push((call) => {
		if (failed || !accepts(call)) return;
		failed = true;
		throw new Error('connection lost');
	});
}

/** The holders of these rows died long ago: their leases have run out. */
function expire(table: FakeDataTable): void {
	for (const row of table.rows) row.lease_until = Date.now() - 1_000;
}

/** A run's worker is killed: nothing of it renews or writes any more (it never closes). */
const die = (ledger: TaskLedger) => (ledger as unknown as { renewal: AbortController }).renewal.abort();

/**
 * Every execution so far is over: their holds let the leases go (executionHold.ts; in n8n once the node run is saved,
 * or the execution is gone or cancelled).
 */
const executionsOver = async () => await ExecutionHold.releaseAll();
afterEach(executionsOver);

/** One earlier execution's run: submits FOX at item 0 and dies (its lease has run out). */
async function crashedRun(table: FakeDataTable, executionId = 'exec-A', taskId = 'task_A'): Promise<IDataObject> {
	const { ledger } = await open(table, executionId);
	await submitIn(ledger, 0, FOX, META, sender(taskId).send);
	die(ledger);
	expire(table);
	return table.rows[table.rows.length - 1];
}

const newTable = () => new FakeDataTable(TABLE, LEDGER_COLUMNS);

/** What n8n's crash recovery writes for a node's run it could not save (1.123 and 2.41): finished, or cut off. */
const STAND_INS = {
	finished: { executionStatus: 'success', data: { main: [[{ json: { isArtificialRecoveredEventItem: true } }]] } },
	'cut off': { executionStatus: 'crashed', error: { message: 'Execution stopped at this node' } },
};
const outcomeUnknown = () => Object.assign(new Error('socket hang up'), { context: { [OUTCOME_UNKNOWN]: true } });

/** Another Retry (exec-C) claims the row first. */
function claimedByC(table: FakeDataTable, row: IDataObject): void {
	Object.assign(table.row(row.id as number)!, { execution_id: 'exec-C', claims: Number(row.claims) + 1 });
}

/** A row's ledger columns (without n8n's id, createdAt, updatedAt). */
const columnsOf = (row: IDataObject): IDataObject =>
	Object.fromEntries([...LEDGER_COLUMNS.string, ...LEDGER_COLUMNS.number].map((column) => [column, row[column]]));

describe('the fake Data Table reads the sub-workflows tableWorkflow() builds, and nothing else', () => {
	it('inserts, updates by all conditions, gets, and refuses an unknown column', async () => {
		const table = newTable();
		const run = async (op: TableOp, calls: IDataObject[]) =>
			(await table.executeWorkflow({ code: tableWorkflow(TABLE, op, calls) }, inputItems(op, calls))).data[0];
		const inserted = await run({ kind: 'insert', columns: ['state', 'claims'] }, [
			{ row: { state: 'sending', claims: 0 } },
			{ row: { state: 'accepted', claims: 0 } },
		]);
		expect(inserted?.map((item) => item.json.id)).toEqual([1, 2]);
		const where = [{ column: 'id', condition: 'eq' as const }, { column: 'claims', condition: 'eq' as const }];
		const updated = await run({ kind: 'update', columns: ['claims'], where }, [
			{ where: { id: 2, claims: 0 }, set: { claims: 1 } },
			{ where: { id: 1, claims: 5 }, set: { claims: 6 } },
		]);
		expect(updated?.map((item) => [item.json.id, item.json.claims])).toEqual([[2, 1]]);
		const byState = [{ column: 'state', condition: 'eq' as const }];
		const got = await run({ kind: 'get', where: byState }, [{ where: { state: 'sending' } }]);
		expect(got?.map((item) => item.json.id)).toEqual([1]);
		const colour = run({ kind: 'insert', columns: ['colour'] }, [{ row: { colour: 'red' } }]);
		await expect(colour).rejects.toThrow(/unknown column/);
		await expect(
			table.executeWorkflow({ code: tableWorkflow('another', { kind: 'insert', columns: [] }) }, []),
		).rejects.toThrow(/Could not find/);
		expect(table.calls.map((call) => call.kind)).toEqual(['insert', 'update', 'get', 'insert']);
	});
});

describe('a ledger write evaluates no expression (n8n 2.x runs each in an isolate: most of a write\'s CPU)', () => {
	/** Every parameter value of the sub-workflow's Data Table node, however deep. */
	const valuesIn = (value: unknown): unknown[] =>
		value && typeof value === 'object' ? Object.values(value).flatMap(valuesIn) : [value];
	const tableNodeOf = (op: TableOp, calls: IDataObject[]) => tableWorkflow(TABLE, op, calls).nodes[1];
	const isExpression = (value: unknown) => typeof value === 'string' && value.startsWith('=');
	const where = [{ column: 'id', condition: 'eq' as const }, { column: 'claims', condition: 'eq' as const }];

	it('one update or one read: its values are written into the node as they are; an insert maps its items', () => {
		const update = tableNodeOf({ kind: 'update', columns: ['state', 'task_id'], where }, [
			{ where: { id: 7, claims: 2 }, set: { state: 'accepted', task_id: 'task_{{ 1 }}' } },
		]);
		expect(valuesIn(update.parameters).filter(isExpression)).toEqual([]);
		expect(update.parameters).toMatchObject({
			columns: { value: { state: 'accepted', task_id: 'task_{{ 1 }}' } },
			filters: { conditions: [{ keyName: 'id', keyValue: 7 }, { keyName: 'claims', keyValue: 2 }] },
		});
		const get = tableNodeOf({ kind: 'get', where: [{ column: 'workflow_id', condition: 'eq' }] }, [{ where: { workflow_id: 'wf1' } }]);
		expect(valuesIn(get.parameters).filter(isExpression)).toEqual([]);
		const insert = tableNodeOf({ kind: 'insert', columns: ['state'] }, [{ row: { state: 'planned' } }, { row: { state: 'planned' } }]);
		expect(insert.parameters.columns).toEqual({ mappingMode: 'autoMapInputData', value: null });
		expect(inputItems({ kind: 'insert', columns: ['state'] }, [{ row: { state: 'planned' } }])).toEqual([{ json: { state: 'planned' } }]);
	});

	it('a value n8n would take for an expression (a task id the service chose starting with "=") is read from the item, never evaluated as written', async () => {
		const hostile = '={{ $env.N8N_ENCRYPTION_KEY }}';
		const op: TableOp = { kind: 'update', columns: ['state', 'task_id'], where: [{ column: 'id', condition: 'eq' }] };
		const calls = [{ where: { id: 1 }, set: { state: 'accepted', task_id: hostile } }];
		const node = tableNodeOf(op, calls);
		expect((node.parameters.columns as IDataObject).value).toEqual({ state: 'accepted', task_id: '={{ $json.set["task_id"] }}' });
		const table = newTable();
		table.seed({ state: 'sending', task_id: '' });
		await table.executeWorkflow({ code: tableWorkflow(TABLE, op, calls) }, inputItems(op, calls));
		expect(table.row(1)).toMatchObject({ state: 'accepted', task_id: hostile });
	});

	it('a condition starting with "=", and anything but a plain string, number or boolean, is read from the item', async () => {
		const hostile = '={{ $env.HOME }}';
		const table = newTable();
		table.seed({ workflow_id: hostile, state: 'accepted' });
		const op: TableOp = { kind: 'get', where: [{ column: 'workflow_id', condition: 'eq' }] };
		const calls = [{ where: { workflow_id: hostile } }];
		expect(tableNodeOf(op, calls).parameters).toMatchObject({
			filters: { conditions: [{ keyValue: '={{ $json.where["workflow_id"] }}' }] },
		});
		const rows = (await table.executeWorkflow({ code: tableWorkflow(TABLE, op, calls) }, inputItems(op, calls))).data[0];
		expect(rows).toHaveLength(1);
		// n8n would evaluate a `=` string inside an object, and fill a missing condition with '' (matching empty ids).
		for (const odd of [{ a: hostile }, null, undefined, Number.NaN]) {
			const node = tableNodeOf({ kind: 'update', columns: ['state'], where: [{ column: 'id', condition: 'eq' }] }, [
				{ where: { id: odd } as IDataObject, set: { state: odd } as IDataObject },
			]);
			expect(node.parameters).toMatchObject({
				columns: { value: { state: '={{ $json.set["state"] }}' } },
				filters: { conditions: [{ keyValue: '={{ $json.where["id"] }}' }] },
			});
		}
	});

	it('an insert stores its row as it is, the op\'s columns only; a table ID that starts with "=" is refused', async () => {
		const table = newTable();
		const row = { state: 'accepted', task_id: '={{ $env.N8N_ENCRYPTION_KEY }}', claims: 0, colour: 'red' };
		const op: TableOp = { kind: 'insert', columns: ['state', 'task_id', 'claims'] };
		expect(valuesIn(tableNodeOf(op, [{ row }]).parameters).filter(isExpression)).toEqual([]);
		await table.executeWorkflow({ code: tableWorkflow(TABLE, op, [{ row }]) }, inputItems(op, [{ row }]));
		expect(table.row(1)).toMatchObject({ state: 'accepted', task_id: row.task_id, claims: 0 });
		expect(table.row(1)).not.toHaveProperty('colour');
		const ctx = { getNode: () => ({ name: 'Generate' }), executeWorkflow: jest.fn() } as unknown as IExecuteFunctions;
		await expect(runTable(ctx, '={{ $json.table }}', op, [{ row }])).rejects.toThrow(/never starts with "="/);
		expect(ctx.executeWorkflow).not.toHaveBeenCalled();
	});

	it('several calls in one run: each item\'s values from its own json', () => {
		const node = tableNodeOf({ kind: 'update', columns: ['state'], where: [{ column: 'id', condition: 'eq' }] }, [
			{ where: { id: 1 }, set: { state: 'accepted' } },
			{ where: { id: 2 }, set: { state: 'refused' } },
		]);
		expect(node.parameters).toMatchObject({
			columns: { value: { state: '={{ $json.set["state"] }}' } },
			filters: { conditions: [{ keyValue: '={{ $json.where["id"] }}' }] },
		});
	});
});

describe('identity: run_key = workflow/node/run index, item_key = the input item (itemKeys), never the body', () => {
	it('two identical requests at different item indexes are two rows, both paid and accepted', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		const { send, sent } = sender('task_0', 'task_1');
		const answers = [await submitIn(ledger, 0, FOX, META, send), await submitIn(ledger, 1, FOX, META, send)];
		await ledger.close();
		expect(answers.map((answer) => [answer.taskId, answer.resumed])).toEqual([['task_0', false], ['task_1', false]]);
		expect(sent).toHaveLength(2);
		expect(table.rows.map((row) => [row.run_key, row.item_key, row.state, row.task_id])).toEqual([
			[`${WORKFLOW}/${NODE.id}/0`, KEYS[0], 'accepted', 'task_0'],
			[`${WORKFLOW}/${NODE.id}/0`, KEYS[1], 'accepted', 'task_1'],
		]);
	});

	it('the same execution again resumes the item (task id, submitted_at) whatever its body evaluates to now', async () => {
		const table = newTable();
		const first = await open(table, 'exec-A');
		const stamped = (at: number) => ({ ...FOX, prompt: `a fox, ${new Date(at).toISOString()}` });
		const accepted = await submitIn(first.ledger, 0, stamped(1), META, sender('task_fox').send);
		await first.ledger.close();

		// Retry On Fail, a 1.x worker re-running the job: `{{ $now }}` in the prompt evaluates anew.
		const again = await open(table, 'exec-A');
		const { send, sent } = sender('task_paid_again');
		const resumed = await submitIn(again.ledger, 0, stamped(2), META, send);
		await again.ledger.close();
		expect(resumed).toEqual({ taskId: 'task_fox', resumed: true, acceptedAt: accepted.acceptedAt });
		expect(sent).toEqual([]);
		expect(table.rows).toHaveLength(1);
	});

	it('another run index of the node is another run: nothing resumed or adopted across it', async () => {
		const table = newTable();
		await crashedRun(table, 'exec-A', 'task_run0');
		// A Retry at run 1 after a real run 0 (a loop's; run 0's row is an orphan), then the same execution's run 1 (run
		// 0's row is its own).
		const looped = { resultData: { runData: { [NODE.name]: [{ data: { main: [[{ json: { task_id: 'task_run0' } }]] } }] } } };
		const saved = { 'exec-B': looped as unknown as IRunExecutionData };
		for (const [executionId, mode] of [['exec-B', 'retry'], ['exec-A', 'manual']]) {
			const { ledger } = await open(table, executionId, { mode, runIndex: 1, saved });
			const { send, sent } = sender(`task_run1_${executionId}`);
			expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ resumed: false });
			await ledger.close();
			expect(sent).toHaveLength(1);
		}
		expect(table.rows.map((row) => row.run_key)).toEqual([0, 1, 1].map((run) => `${WORKFLOW}/${NODE.id}/${run}`));
		expect(table.rows[0]).toMatchObject({ execution_id: 'exec-A', claims: 0, task_id: 'task_run0' });
	});
});

describe('a Retry adopts only a task paid for the same request at the item\'s position', () => {
	it('input in another order: each item takes over the task paid for it, nothing is sent (the key is the item, not its index)', async () => {
		const table = newTable();
		const inputs = [{ prompt: 'a fox' }, { prompt: 'a cat' }, { prompt: 'a fox' }];
		const first = await open(table, 'exec-A', { inputs });
		for (const [index, taskId] of ['task_fox0', 'task_cat', 'task_fox1'].entries()) {
			await submitIn(first.ledger, index, inputs[index], META, sender(taskId).send);
		}
		await first.ledger.close();
		expire(table);
		// The Retry's upstream ran again and gave the items in another order.
		const order = [1, 0, 2];
		const { ledger } = await open(table, 'exec-B', { mode: 'retry', inputs: order.map((index) => inputs[index]) });
		const { send, sent } = sender();
		const taken = [];
		for (const index of [0, 1, 2]) taken.push((await submitIn(ledger, index, inputs[order[index]], META, send)).taskId);
		await ledger.close();
		// Two identical items are told apart by their order among themselves: the first fox is still the first.
		expect(taken).toEqual(['task_cat', 'task_fox0', 'task_fox1']);
		expect(sent).toEqual([]);
	});

	it('the executions of one workflow share the node run\'s key but never each other\'s rows: a Retry takes its own crashed run\'s tasks among fifty (found by bench:scale\'s queue case)', async () => {
		const table = newTable();
		const inputsOf = (execution: number) => [0, 1].map((item) => ({ prompt: `Queue ${execution}.${item}` }));
		for (let execution = 1; execution <= 5; execution++) {
			const { ledger } = await open(table, `exec-${execution}`, { inputs: inputsOf(execution) });
			for (const item of [0, 1]) {
				const request = inputsOf(execution)[item];
				await submitIn(ledger, item, request, { ...META, prompt: request.prompt }, sender(`task_${execution}_${item}`).send);
			}
			await ledger.close();
		}
		expire(table);
		const { ledger } = await open(table, 'exec-R', { mode: 'retry', inputs: inputsOf(3) });
		const { send, sent } = sender();
		const taken = [];
		for (const item of [0, 1]) {
			const request = inputsOf(3)[item];
			taken.push((await submitIn(ledger, item, request, { ...META, prompt: request.prompt }, send)).taskId);
		}
		await ledger.close();
		expect(taken).toEqual(['task_3_0', 'task_3_1']);
		expect(sent).toEqual([]);
	});

	it('identical items, a middle Retry stamped anew: a later Retry gives each item the row of its own key or position before an identical sibling\'s (found by the property test, seed 18: an item took its sibling\'s unknown outcome, the sibling paid again)', async () => {
		const table = newTable();
		const inputs = [{ form: {} }, { form: {} }];
		// exec-A: two identical items; item 0 paid and accepted, item 1 only planned when the worker died.
		const crashed = await open(table, 'exec-A', { inputs });
		await crashed.ledger.plan([0, 1].map((itemIndex) => ({ itemIndex, meta: META })));
		await submitIn(crashed.ledger, 0, FOX, META, sender('task_A0').send);
		await crashed.ledger.close();
		expire(table);
		// Its Retry exec-B ran the nodes before Generate again (stamped: other keys); it sent item 1 and died before the
		// answer (`sending`: an unknown outcome at position 1 under its stamped key #1).
		const stamped = inputs.map((json) => ({ ...json, received_at: 'exec-B' }));
		const middle = await open(table, 'exec-B', { mode: 'retry', inputs: stamped });
		await expect(submitIn(middle.ledger, 1, FOX, META, async () => await Promise.reject(outcomeUnknown()))).rejects.toThrow('socket hang up');
		await middle.ledger.close();
		expire(table);
		// exec-C, a Retry of exec-B on its saved input: the same stamped keys.
		const { ledger } = await open(table, 'exec-C', { mode: 'retry', inputs: stamped });
		const { send, sent } = sender('task_C');
		const answers = [];
		for (const index of [0, 1]) {
			answers.push(await submitIn(ledger, index, FOX, META, send).then((s) => s.taskId, (error: Error) => error.message));
		}
		await ledger.close();
		// Before: item 0 took exec-B's unknown outcome (a row of an identical item went before the row at its position),
		// and item 1, its own row taken, paid task_C: three POSTs for two items.
		expect(sent).toEqual([]);
		expect(answers).toEqual(['task_A0', expect.stringMatching(/^Not resubmitted: an earlier run of this item \(execution exec-B\)/)]);
	});

	it('the same item with another request (the prompt was edited before a Retry): the item fails naming the task, nothing is sent or claimed (found by an adversarial review)', async () => {
		const table = newTable();
		const orphan = await crashedRun(table, 'exec-A', 'task_fox');
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		const { send, sent } = sender();
		const refused = submitIn(ledger, 0, { ...FOX, prompt: 'a kite' }, META, send);
		await expect(refused).rejects.toThrow(/^Not submitted: the run this Retry takes over \(execution exec-A\) paid at item 0 for another request .*task task_fox\.$/);
		await expect(refused).rejects.toMatchObject({ context: { task_id: 'task_fox' } });
		await ledger.close();
		expect(sent).toEqual([]);
		expect(orphan).toMatchObject({ execution_id: 'exec-A', claims: 0 });
	});
});

describe('an outcome that may have been paid is never sent again', () => {
	it('a send with an unknown outcome leaves the row `sending`; the same execution refuses, never sends', async () => {
		const table = newTable();
		const first = await open(table, 'exec-A');
		const reset = Object.assign(new Error('socket hang up'), { context: { [OUTCOME_UNKNOWN]: true } });
		await expect(submitIn(first.ledger, 0, FOX, META, async () => await Promise.reject(reset))).rejects.toBe(reset);
		await first.ledger.close();
		expect(table.rows.map((row) => row.state)).toEqual(['sending']);

		const again = await open(table, 'exec-A');
		const { send, sent } = sender();
		const refused = submitIn(again.ledger, 0, FOX, META, send);
		await expect(refused).rejects.toThrow(NodeOperationError);
		await expect(refused).rejects.toThrow(/Not resubmitted: an earlier run of this item \(execution exec-A\)/);
		await again.ledger.close();
		expect(sent).toEqual([]);
		expect(table.rows).toHaveLength(1);
	});

	it('a Retry that adopts an orphan `sending` row claims it and refuses the same way, paying nothing', async () => {
		const table = newTable();
		const orphan = await crashedRun(table);
		Object.assign(orphan, { state: 'sending', task_id: '' });
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		const { send, sent } = sender();
		// The error names the run that died, not this Retry.
		await expect(submitIn(ledger, 0, FOX, META, send)).rejects.toThrow(/Not resubmitted: an earlier run of this item \(execution exec-A\)/);
		await ledger.close();
		expect(sent).toEqual([]);
		expect(table.rows).toHaveLength(1);
		expect(orphan).toMatchObject({ execution_id: 'exec-B', claims: 1 });
	});

	it('a planned row named as sent after another (its POST may have gone out) is never sent: same execution or Retry', async () => {
		const table = newTable();
		const hare = { ...FOX, prompt: 'a hare' };
		const first = await open(table, 'exec-A');
		await first.ledger.plan([
			{ itemIndex: 0, meta: META },
			{ itemIndex: 1, meta: { ...META, prompt: hare.prompt } },
		]);
		die(first.ledger);
		expire(table);
		// The worker died after item 0's accepted write named item 1's row, before item 1's answer was recorded.
		const [before, sent] = table.rows;
		Object.assign(before, { state: 'accepted', task_id: 'task_0', detail: JSON.stringify({ ...JSON.parse(String(before.detail)), next_row: sent.id }) });
		for (const [executionId, mode] of [['exec-A', 'manual'], ['exec-B', 'retry']]) {
			const { ledger } = await open(table, executionId, { mode });
			const posts = sender('task_new');
			expect(await submitIn(ledger, 0, FOX, META, posts.send)).toMatchObject({ taskId: 'task_0', resumed: true });
			await expect(submitIn(ledger, 1, hare, META, posts.send)).rejects.toThrow(/^Not resubmitted: an earlier run/);
			await ledger.close();
			await executionsOver();
			expect(posts.sent).toEqual([]);
		}
	});

	it('a refused send (nothing paid) marks the row `refused`; the next try pays on a new row', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		const badRequest = Object.assign(new Error('400 invalid duration'), { context: { [OUTCOME_UNKNOWN]: false } });
		await expect(submitIn(ledger, 0, FOX, META, async () => await Promise.reject(badRequest))).rejects.toBe(badRequest);
		expect(table.rows.map((row) => row.state)).toEqual(['refused']);
		await ledger.close();

		const again = await open(table, 'exec-A');
		const { send, sent } = sender('task_2');
		expect(await submitIn(again.ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_2', resumed: false });
		await again.ledger.close();
		expect(sent).toHaveLength(1);
		expect(table.rows.map((row) => row.state)).toEqual(['refused', 'accepted']);
	});
});

describe('a Retry (mode retry) adopts a dead run\'s rows; any other execution pays again', () => {
	it('an orphan whose lease ran out is claimed by compare-and-set: no send, its task id, resumed', async () => {
		const table = newTable();
		const orphan = await crashedRun(table, 'exec-A', 'task_A');
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		const { send, sent } = sender();
		const answer = await submitIn(ledger, 0, FOX, META, send);
		await ledger.close();
		expect(answer).toMatchObject({ taskId: 'task_A', resumed: true });
		expect(answer.acceptedAt).toBe(Date.parse(JSON.parse(String(orphan.detail)).submitted_at));
		expect(sent).toEqual([]);
		expect(table.rows).toHaveLength(1);
		expect(orphan).toMatchObject({ execution_id: 'exec-B', claims: 1, state: 'accepted', task_id: 'task_A' });
	});

	it('a claim that lost its race moves to the next candidate', async () => {
		const table = newTable();
		const orphan = await crashedRun(table, 'exec-A', 'task_A');
		// A later run of the same lineage handed task_Y out, but its output never reached n8n's database.
		table.seed({ ...columnsOf(orphan), execution_id: 'exec-Y', state: 'handed', task_id: 'task_Y' });
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		// Another Retry claims the accepted row between B's read and B's claim.
		table.beforeNext('update', () => claimedByC(table, orphan));
		const { send, sent } = sender();
		const answer = await submitIn(ledger, 0, FOX, META, send);
		await ledger.close();
		expect(answer).toMatchObject({ taskId: 'task_Y', resumed: true });
		expect(sent).toEqual([]);
		expect(table.rows.map((row) => [row.task_id, row.execution_id, row.claims])).toEqual([
			['task_A', 'exec-C', 1],
			['task_Y', 'exec-B', 1],
		]);
	});

	it('a claim that lost its race with no candidate left pays nothing: another live run holds the task', async () => {
		const table = newTable();
		const orphan = await crashedRun(table, 'exec-A', 'task_A');
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		table.beforeNext('update', () => claimedByC(table, orphan));
		const { send, sent } = sender('task_B');
		await expect(submitIn(ledger, 0, FOX, META, send)).rejects.toThrow(/^Not submitted: another run that is still going/);
		await ledger.close();
		expect(sent).toEqual([]);
		expect(table.rows.map((row) => [row.task_id, row.execution_id])).toEqual([['task_A', 'exec-C']]);
	});

	it('an accepted row is adopted only when its task never went on: its run not saved, or its item an error', async () => {
		const outputs = { none: undefined, task: { task_id: 'task_A' }, error: { error: 'the video expired', task_id: 'task_A' } };
		for (const [output, json] of Object.entries(outputs)) {
			const table = newTable();
			await crashedRun(table, 'exec-A', 'task_A');
			const runData = { [NODE.name]: [{ data: { main: [[{ json }]] } }] };
			const execution = { resultData: { runData } } as unknown as IRunExecutionData;
			const saved: Record<string, IRunExecutionData> = json ? { 'exec-A': execution } : {};
			const { ledger } = await open(table, 'exec-B', { mode: 'retry', saved });
			const { send, sent } = sender('task_B');
			const answer = await submitIn(ledger, 0, FOX, META, send);
			await ledger.close();
			expect({ output, adopted: [answer.taskId, sent.length] }).toEqual({
				output,
				adopted: output === 'task' ? ['task_B', 1] : ['task_A', 0],
			});
		}
	});

	it('an accepted row of a run n8n saved as failed is adopted: its items never went on (Retry of a failed run)', async () => {
		const table = newTable();
		await crashedRun(table, 'exec-A', 'task_A');
		const failedRun = { error: { message: 'another item failed' }, data: undefined };
		const saved = { 'exec-A': { resultData: { runData: { [NODE.name]: [failedRun] } } } as unknown as IRunExecutionData };
		const { ledger } = await open(table, 'exec-B', { mode: 'retry', saved });
		const { send, sent } = sender('task_B');
		expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_A', resumed: true });
		await ledger.close();
		expect(sent).toEqual([]);
	});

	it("a Retry after n8n's crash recovery stood in for the node's finished run is run 1, yet replays run 0: it adopts, paying nothing (found by bench:scale's queue case on a loaded machine: a worker killed just after the node sent its 20 items, and the Retry paid all 20 again)", async () => {
		// What n8n's recovery writes for a node that finished (1.123 and 2.41): one run, one artificial item. The Retry
		// keeps it and runs the node again after it, as run 1; a crashed stand-in (a node cut off, not the last one run)
		// counts the same.
		for (const [kind, standIn] of Object.entries(STAND_INS)) {
			const table = newTable();
			await crashedRun(table, 'exec-A', 'task_A');
			const recovered = { resultData: { runData: { [NODE.name]: [standIn] } } } as unknown as IRunExecutionData;
			const saved = { 'exec-A': recovered, 'exec-B': recovered };
			const { ledger } = await open(table, 'exec-B', { mode: 'retry', runIndex: 1, saved });
			const { send, sent } = sender('task_B');
			const answer = await submitIn(ledger, 0, FOX, META, send);
			await ledger.close();
			expect({ kind, taskId: answer.taskId, sent }).toEqual({ kind, taskId: 'task_A', sent: [] });
			expect(table.rows.map((row) => [row.run_key, row.task_id, row.execution_id])).toEqual([
				[`${WORKFLOW}/${NODE.id}/0`, 'task_A', 'exec-B'],
			]);
		}
	});

	it("a Retry that handed its task on after a stand-in is read at its own run: another Retry of the crashed run does not hand that task on again", async () => {
		const table = newTable();
		await crashedRun(table, 'exec-A', 'task_A');
		const standIn = STAND_INS.finished;
		const recovered = { resultData: { runData: { [NODE.name]: [standIn] } } } as unknown as IRunExecutionData;
		const saved: Record<string, IRunExecutionData> = { 'exec-A': recovered, 'exec-B': recovered, 'exec-C': recovered };
		const first = await open(table, 'exec-B', { mode: 'retry', runIndex: 1, saved });
		expect(await submitIn(first.ledger, 0, FOX, META, sender().send)).toMatchObject({ taskId: 'task_A' });
		await first.ledger.close();
		expire(table);
		// n8n saved exec-B as succeeded: the stand-in, then its own run 1, which handed task_A on.
		const handed = { data: { main: [[{ json: { task_id: 'task_A' } }]] } };
		saved['exec-B'] = { resultData: { runData: { [NODE.name]: [standIn, handed] } } } as unknown as IRunExecutionData;
		const second = await open(table, 'exec-C', { mode: 'retry', runIndex: 1, saved });
		const { send, sent } = sender('task_C');
		const answer = await submitIn(second.ledger, 0, FOX, META, send);
		await second.ledger.close();
		// Read at run 0, the stand-in, task_A looked as if it never went on, and went on again from exec-C.
		expect({ taskId: answer.taskId, sent }).toEqual({ taskId: 'task_C', sent: ['task_C'] });
	});

	it('Loop Over Items after a stand-in: each run of the Retry (one execution, one signal) replays the crashed run\'s and adopts its task', async () => {
		const table = newTable();
		for (const [runIndex, name, taskId] of [[0, 'A', 'task_A'], [1, 'B', 'task_B'], [2, 'C', 'task_C']] as const) {
			const { ledger } = await open(table, 'exec-A', { runIndex, inputs: [{ batch: name }] });
			await submitIn(ledger, 0, FOX, META, sender(taskId).send);
			await ledger.close();
		}
		expire(table);
		// n8n's recovery writes one stand-in (a node's run data once); the Retry runs the loop again as runs 1, 2, 3.
		const recovered = { resultData: { runData: { [NODE.name]: [STAND_INS.finished] } } } as unknown as IRunExecutionData;
		const saved = { 'exec-A': recovered, 'exec-B': recovered };
		const signal = new AbortController().signal;
		const adopted: string[] = [];
		const paid: string[] = [];
		for (const [runIndex, name] of [[1, 'A'], [2, 'B'], [3, 'C']] as const) {
			const { ledger } = await open(table, 'exec-B', { mode: 'retry', runIndex, saved, signal, inputs: [{ batch: name }] });
			const { send, sent } = sender(`paid_${name}`);
			adopted.push((await submitIn(ledger, 0, FOX, META, send)).taskId);
			await ledger.close();
			paid.push(...sent);
		}
		expect({ adopted, paid }).toEqual({ adopted: ['task_A', 'task_B', 'task_C'], paid: [] });
		expect(table.rows.map((row) => row.run_key)).toEqual([0, 1, 2].map((run) => `${WORKFLOW}/${NODE.id}/${run}`));
	});

	describe("n8n's crash recovery amends an execution still running (found by a helper session's review)", () => {
		// A worker that restarts amends every unfinished execution of its event log: one shared by workers with one n8n
		// folder, or a job n8n 1.x re-ran on another worker, may still be running. A Retry in a loop whose Generate had
		// no run data when it began then has a stand-in for its own run 0 in its saved data when run 1 reads it.
		const BEAR = { ...FOX, prompt: 'a bear' };
		const batch = (name: string) => ({ inputs: [{ batch: name }] });
		const handedOnRun = (...taskIds: string[]) => ({ data: { main: [taskIds.map((task_id) => ({ json: { task_id } }))] } });
		const runData = (byNode: Record<string, unknown[]>) => ({ resultData: { runData: byNode } }) as unknown as IRunExecutionData;

		/** exec-R1, a Retry, runs batch A (Generate's run 0), is amended, then runs `second` as its run 1. */
		async function amendedWhileRunning(table: FakeDataTable, saved: Record<string, IRunExecutionData>, second: string, request = FOX) {
			const signal = new AbortController().signal;
			const runA = await open(table, 'exec-R1', { mode: 'retry', runIndex: 0, saved, signal, ...batch('A') });
			await submitIn(runA.ledger, 0, FOX, META, sender('task_A').send);
			await runA.ledger.close();
			saved['exec-R1'] = runData({ [NODE.name]: [STAND_INS.finished] });
			const runB = await open(table, 'exec-R1', { mode: 'retry', runIndex: 1, saved, signal, ...batch(second) });
			const { send, sent } = sender(second === 'A' ? 'task_A_batch2' : 'task_B');
			const answer = await submitIn(runB.ledger, 0, request, { ...META, prompt: String(request.prompt) }, send);
			await runB.ledger.close();
			return { answer, sent };
		}

		it('its run 1 keeps its own number: a Retry of it adopts both batches, paying nothing', async () => {
			const table = newTable();
			const saved: Record<string, IRunExecutionData> = {};
			expect((await amendedWhileRunning(table, saved, 'B', BEAR)).sent).toEqual(['task_B']);
			expire(table);
			// exec-R1 dies before n8n saves it; exec-R2 retries it: the stand-in, batch A as run 1, batch B as run 2.
			saved['exec-R2'] = runData({ [NODE.name]: [STAND_INS.finished] });
			const signal = new AbortController().signal;
			const answers: string[] = [];
			const paid: string[] = [];
			for (const [runIndex, name, request] of [[1, 'A', FOX], [2, 'B', BEAR]] as const) {
				const { ledger } = await open(table, 'exec-R2', { mode: 'retry', runIndex, saved, signal, ...batch(name) });
				const { send, sent } = sender(`task_${name}_again`);
				answers.push((await submitIn(ledger, 0, request, { ...META, prompt: request.prompt }, send)).taskId);
				await ledger.close();
				paid.push(...sent);
			}
			expect({ answers, paid }).toEqual({ answers: ['task_A', 'task_B'], paid: [] });
		});

		it('an item repeated in its next batch is a new task, not batch A\'s handed on again', async () => {
			const { answer, sent } = await amendedWhileRunning(newTable(), {}, 'A');
			expect({ taskId: answer.taskId, resumed: answer.resumed, sent }).toEqual({ taskId: 'task_A_batch2', resumed: false, sent: ['task_A_batch2'] });
		});

		it('once n8n saved it as succeeded, Recover lists none of its tasks', async () => {
			const table = newTable();
			const saved: Record<string, IRunExecutionData> = {};
			await amendedWhileRunning(table, saved, 'B', BEAR);
			saved['exec-R1'] = runData({ [NODE.name]: [handedOnRun('task_A'), handedOnRun('task_B')] });
			expect((await recoverTasks(contextFor(table, 'exec-R', { saved }).ctx, TABLE, WORKFLOW)).tasks).toEqual([]);
		});
	});

	it('a Retry with the node renamed since adopts the task under its new name: once it handed it on, Recover lists nothing (found by the same review)', async () => {
		const table = newTable();
		await crashedRun(table, 'exec-A', 'task_A');
		const renamed = `${NODE.name} (renamed)`;
		const saved: Record<string, IRunExecutionData> = {
			'exec-A': { resultData: { runData: { [NODE.name]: [STAND_INS.finished] } } } as unknown as IRunExecutionData,
		};
		const { ledger } = await open(table, 'exec-B', { mode: 'retry', saved, nodeName: renamed });
		const { send, sent } = sender('task_paid_again');
		expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_A', resumed: true });
		await ledger.close();
		expect(sent).toEqual([]);
		// n8n saved exec-B as succeeded: the old name's stand-in, and the renamed node's run that handed task_A on.
		const handed = { data: { main: [[{ json: { task_id: 'task_A' } }]] } };
		saved['exec-B'] = { resultData: { runData: { [NODE.name]: [STAND_INS.finished], [renamed]: [handed] } } } as unknown as IRunExecutionData;
		expect((await recoverTasks(contextFor(table, 'exec-R', { saved }).ctx, TABLE, WORKFLOW)).tasks).toEqual([]);
	});

	it('a Retry whose own saved run data cannot be read sends nothing: which run it replays is unknown', async () => {
		const unreadable = await open(newTable(), 'exec-C', { mode: 'retry', runIndex: 1, saved: {} }).then(
			async ({ ledger }) => await ledger.close(),
			(error: unknown) => error,
		);
		expect(unreadable).toBeInstanceOf(NodeOperationError);
		expect((unreadable as Error).message).toBe("Task Ledger: could not read this Retry's saved run data, so nothing was sent");
	});

	it('an unknown outcome Recover reported stays unknown for a Retry: never sent', async () => {
		const table = newTable();
		const orphan = await crashedRun(table, 'exec-A', 'task_A');
		Object.assign(orphan, { state: 'reported', task_id: '' });
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		const { send, sent } = sender('task_B');
		await expect(submitIn(ledger, 0, FOX, META, send)).rejects.toThrow(/^Not resubmitted/);
		await ledger.close();
		expect(sent).toEqual([]);
	});

	it('a new execution that is not a Retry never adopts another execution\'s row: it pays again', async () => {
		const table = newTable();
		const orphan = await crashedRun(table, 'exec-A', 'task_A');
		for (const mode of ['trigger', 'webhook', 'manual']) {
			const { ledger } = await open(table, `exec-${mode}`, { mode });
			const { send, sent } = sender(`task_${mode}`);
			expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ taskId: `task_${mode}`, resumed: false });
			await ledger.close();
			expect(sent).toHaveLength(1);
		}
		expect(orphan).toMatchObject({ execution_id: 'exec-A', claims: 0 });
		expect(table.rows).toHaveLength(4);
	});
});

describe('a failing Data Table', () => {
	it('a failed read or write before the send stops the item with a NodeOperationError, nothing sent', async () => {
		const table = newTable();
		table.beforeNext('get', () => {
			throw new Error('SQLITE_ERROR: no such table: data_table_user_tblLedger0001');
		});
		const failed = await open(table, 'exec-A').then(() => undefined, (error: unknown) => error);
		expect(failed).toBeInstanceOf(NodeOperationError);
		expect((failed as Error).message).toMatch(/could not be read: SQLITE_ERROR: no such table/);
		expect(table.count('get')).toBe(1);
		const { ledger } = await open(table, 'exec-A');
		table.beforeNext('insert', () => {
			throw new Error('Data table size limit exceeded');
		});
		const { send, sent } = sender();
		const submitted = submitIn(ledger, 0, FOX, META, send);
		await expect(submitted).rejects.toThrow(/could not be written: Data table size limit exceeded/);
		await ledger.close();
		expect(sent).toEqual([]);
	});

	it('a busy database is run again: the row written once, one POST; a lasting one fails the item, nothing sent', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		table.beforeNext('insert', () => {
			throw new Error('SQLITE_BUSY: database is locked');
		});
		table.beforeNext('insert', () => {
			throw new Error('SQLITE_BUSY: database is locked');
		});
		table.beforeNext('update', () => {
			throw new Error('database is locked');
		});
		const { send, sent } = sender('task_once');
		expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_once' });
		expect(sent).toEqual(['task_once']);
		expect(table.count('insert')).toBe(3);
		expect(table.rows.map((row) => [row.state, row.task_id])).toEqual([['accepted', 'task_once']]);

		table.before.push((call) => {
			if (call.kind === 'insert') throw new Error('SQLITE_BUSY: database is locked');
		});
		const again = sender();
		const failed = submitIn(ledger, 1, { ...FOX, prompt: 'a heron' }, META, again.send);
		await expect(failed).rejects.toThrow(new RegExp(`could not be written: SQLITE_BUSY.*\\(${TABLE_ATTEMPTS} attempts\\)`));
		await ledger.close();
		expect(again.sent).toEqual([]);
		expect(table.count('insert')).toBe(3 + TABLE_ATTEMPTS);
	});

	it('a read that met another run\'s write between two pages is read again; a lasting one fails, nothing sent', async () => {
		const table = newTable();
		const changed = () => {
			throw new Error('synchronization error: result count changed during pagination');
		};
		table.beforeNext('get', changed);
		const { ledger } = await open(table, 'exec-A');
		expect(table.count('get')).toBe(2);
		const { send, sent } = sender('task_read');
		expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_read' });
		await ledger.close();
		expect(sent).toEqual(['task_read']);

		table.before.push((call) => {
			if (call.kind === 'get') changed();
		});
		await expect(open(table, 'exec-B')).rejects.toThrow(
			new RegExp(`could not be read: synchronization error.*\\(${TABLE_ATTEMPTS} attempts\\)`),
		);
	});

	// n8n 1.x on SQLite without a pool loses count of overlapping transactions: what it writes next may never be
	// committed (the 1.x e2e lost rows the table had shown, CI of ed6b919). Not run again; the error says what to set.
	// Both words TypeORM uses once its count is lost: a commit that finds no transaction, a begin inside one.
	it.each([
		'Transaction is not started yet, start transaction before committing or rolling it back.',
		'SQLITE_ERROR: cannot start a transaction within a transaction',
	])('a lost transaction count (n8n 1.x, SQLite without a pool: "%s") is not run again: the error names the setting', async (lost) => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		table.beforeNext('insert', () => {
			throw new Error(lost);
		});
		const { send, sent } = sender();
		const failed = await submitIn(ledger, 0, FOX, META, send).then(() => undefined, (error: unknown) => error);
		await ledger.close();
		expect(failed).toBeInstanceOf(NodeOperationError);
		expect((failed as NodeOperationError).message).toContain(`could not be written: ${lost}`);
		expect((failed as NodeOperationError).description).toMatch(/DB_SQLITE_POOL_SIZE.*PostgreSQL/);
		expect(sent).toEqual([]);
		expect(table.count('insert')).toBe(1);
	});

	it('a failed write after the service accepted does not lose the task id: logged, and written again at the close', async () => {
		const table = newTable();
		const { ledger, warnings } = await open(table, 'exec-A');
		failAccepted(table);
		const answer = await submitIn(ledger, 0, FOX, META, sender('task_kept').send);
		expect(answer).toMatchObject({ taskId: 'task_kept', resumed: false });
		expect(warnings.join('\n')).toMatch(/row 1 not updated to "accepted".*connection lost/);
		expect(table.rows.map((row) => [row.state, row.task_id])).toEqual([['sending', '']]);
		await ledger.close();
		expect(table.rows.map((row) => [row.state, row.task_id, row.lease_until])).toEqual([['accepted', 'task_kept', 0]]);
	});
});

describe('the window of an unrecorded task stays small', () => {
	it('no other item\'s POST starts in its lane while an accepted task\'s write is still pending', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		let release: () => void = () => undefined;
		const held = new Promise<void>((resolve) => (release = resolve));
		// The first accepted write hangs (a slow database) until released.
		let hung = false;
		table.before.push(async (call) => {
			if (hung || !accepts(call)) return;
			hung = true;
			await held;
		});
		const posted: string[] = [];
		let firstAnswered: () => void = () => undefined;
		const answered = new Promise<void>((resolve) => (firstAnswered = resolve));
		const first = ledger.submit(META, { itemIndex: 0, gate: direct }, async (lane) => {
			const taskId = await lane.gate(async () => (posted.push('task_1'), 'task_1'));
			firstAnswered();
			return taskId;
		});
		// The second item reaches its lane once the first task was accepted (as a lane of Max Concurrency 1 would).
		const second = ledger.submit(META, { itemIndex: 1, gate: direct }, async (lane) => {
			await answered;
			return await lane.gate(async () => (posted.push('task_2'), 'task_2'));
		});
		await new Promise((resolve) => setTimeout(resolve, 30));
		expect(posted).toEqual(['task_1']);
		release();
		await Promise.all([first, second]);
		await ledger.close();
		expect(posted).toEqual(['task_1', 'task_2']);
		expect(table.rows.map((row) => row.state)).toEqual(['accepted', 'accepted']);
	});
});

describe('one task at a time in the window', () => {
	it('two items in their lanes at once: the second POST waits for the first task\'s accepted write', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		const events: string[] = [];
		// A database that takes its time: each write 5 ms.
		table.before.push(async (call) => {
			await new Promise((resolve) => setTimeout(resolve, 5));
			const set = (item: IDataObject) => item.set as IDataObject;
			const what = (item: IDataObject) => `${set(item).state ?? 'lease'}:${set(item).task_id ?? ''}`;
			if (call.kind === 'update') events.push(`write ${call.items.map(what).join(',')}`);
		});
		const post = (taskId: string) => async () => (events.push(`post ${taskId}`), taskId);
		await Promise.all([
			submitIn(ledger, 0, FOX, META, post('task_1')),
			submitIn(ledger, 1, FOX, META, post('task_2')),
		]);
		await ledger.close();
		await executionsOver();
		// The first row is marked `sending` alone; the first task's accepted write names the second row as sent after it
		// (one row written per task). The execution's end lets both leases go in one write.
		expect(events).toEqual([
			'write sending:',
			'post task_1',
			'write accepted:task_1',
			'post task_2',
			'write accepted:task_2',
			'write lease:',
		]);
		expect(JSON.parse(String(table.rows[0].detail)).next_row).toBe(table.rows[1].id);
	});
});

describe('cost: one row written per task, and four writes per node run', () => {
	it('5 concurrent submissions planned as Generate plans them: one insert, one row written per task, in turn', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		// A sub-workflow run takes a few milliseconds in n8n (an execution row, several statements), never none.
		table.before.push(async () => await new Promise((resolve) => setTimeout(resolve, 5)));
		const items = [0, 1, 2, 3, 4];
		const request = (index: number) => ({ ...FOX, prompt: `a fox, take ${index}` });
		await ledger.plan(items.map((itemIndex) => ({ itemIndex, meta: META })));
		expect(table.rows.map((row) => row.state)).toEqual(items.map(() => 'planned'));
		const posted: number[] = [];
		const answers = await Promise.all(
			items.map(async (index) => await submitIn(ledger, index, request(index), META, async () => {
				// Every row before this one is recorded, this one is marked as sent (`sending`, or named by the row before
				// it), none after it is: one task in the window.
				const named = table.rows.map((row) => Number(JSON.parse(String(row.detail)).next_row));
				const state = (row: IDataObject) => (row.state === 'planned' && named.includes(Number(row.id)) ? 'sent' : row.state);
				expect(table.rows.map(state)).toEqual(
					items.map((other) => (other < index ? 'accepted' : other === index ? (index === 0 ? 'sending' : 'sent') : 'planned')),
				);
				posted.push(index);
				return `task_${index}`;
			})),
		);
		await ledger.close();
		await executionsOver();
		expect(posted).toEqual(items);
		expect(answers.map((answer) => answer.taskId)).toEqual(items.map((index) => `task_${index}`));
		// Read, plan; the first `sending`; each task's `accepted` naming the next one's row; the execution's end (leases).
		expect(table.calls.map((call) => [call.kind, call.items.length])).toEqual([
			['get', 1],
			['insert', 5],
			...Array(1 + 5 + 1).fill(['update', 1]),
		]);
		expect(table.calls.filter(accepts)).toHaveLength(5);
		expect(table.rows.map((row) => [String(KEYS.indexOf(String(row.item_key))), row.state, row.task_id, row.lease_until])).toEqual(
			items.map((index) => [String(index), 'accepted', `task_${index}`, 0]),
		);
	});

	it('a Retry reads the other executions\' rows once for all its items (at once or in turn) while none of them is held', async () => {
		const table = newTable();
		const items = [0, 1, 2, 3, 4];
		const request = (index: number) => ({ ...FOX, prompt: `a fox, take ${index}` });
		const meta = (index: number) => ({ ...META, prompt: request(index).prompt });
		const crashed = await open(table, 'exec-A');
		const paid = sender(...items.map((index) => `task_${index}`));
		for (const index of items) await submitIn(crashed.ledger, index, request(index), meta(index), paid.send);
		await crashed.ledger.close();
		expire(table);
		// Only those reads hold every row of the node run; each adoption reads its own row (by id).
		const allRows = () =>
			table.calls.filter((call) => call.kind === 'get' && Object.keys(call.items[0]?.where ?? {}).join() === 'run_key').length;
		for (const together of [true, false]) {
			const before = allRows();
			const { ledger } = await open(table, `exec-B-${together}`, { mode: 'retry' });
			await ledger.plan(items.map((itemIndex) => ({ itemIndex, meta: meta(itemIndex) })));
			const submit = async (index: number) => await submitIn(ledger, index, request(index), meta(index), sender().send);
			const answers = together ? await Promise.all(items.map(submit)) : [];
			if (!together) for (const index of items) answers.push(await submit(index));
			await ledger.close();
			expect(answers.map((answer) => answer.taskId)).toEqual(items.map((index) => `task_${index}`));
			// The open's read, and one read again before the first item takes over (refreshOthers).
			expect(allRows() - before).toBe(2);
			expire(table);
		}
	});

	it('a request that already has a row is not planned again; an item without a planned row inserts its own', async () => {
		const table = newTable();
		await crashedRun(table, 'exec-A', 'task_A');
		const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
		await ledger.plan([
			{ itemIndex: 0, meta: META },
			{ itemIndex: 1, meta: META },
		]);
		expect(table.calls.filter((call) => call.kind === 'insert').map((call) => call.items.length)).toEqual([1, 1]);
		const { send, sent } = sender('task_hare');
		expect(await submitIn(ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_A', resumed: true });
		expect(await submitIn(ledger, 1, { ...FOX, prompt: 'a hare' }, META, send)).toMatchObject({ taskId: 'task_hare' });
		expect(await submitIn(ledger, 2, { ...FOX, prompt: 'an owl' }, META, send)).toMatchObject({ taskId: 'task_1' });
		await ledger.close();
		expect(sent).toEqual(['task_hare', 'task_1']);
		expect(table.rows.map((row) => [row.execution_id, row.state, row.task_id])).toEqual([
			['exec-B', 'accepted', 'task_A'],
			['exec-B', 'accepted', 'task_hare'],
			['exec-B', 'accepted', 'task_1'],
		]);
	});

	it('a planned row is nothing paid: the same execution submits it, a Retry and Recover leave it alone', async () => {
		const table = newTable();
		const first = await open(table, 'exec-A');
		await first.ledger.plan([{ itemIndex: 0, meta: META }]);
		await first.ledger.close();
		await executionsOver();
		expect(table.rows.map((row) => row.state)).toEqual(['planned']);
		expect(await recoverTasks(contextFor(table, 'exec-R', {}).ctx, TABLE, WORKFLOW)).toEqual({ tasks: [], unknownOutcomes: [] });
		// A Retry finds nothing paid to adopt: it pays, on a row of its own.
		const retry = await open(table, 'exec-B', { mode: 'retry' });
		const retried = sender('task_retry');
		expect(await submitIn(retry.ledger, 0, FOX, META, retried.send)).toMatchObject({ taskId: 'task_retry', resumed: false });
		await retry.ledger.close();
		await executionsOver();
		expect(retried.sent).toEqual(['task_retry']);
		// Retry On Fail: the same execution sends its planned row's request once, on that row.
		const again = await open(table, 'exec-A');
		const { send, sent } = sender('task_once');
		expect(await submitIn(again.ledger, 0, FOX, META, send)).toMatchObject({ taskId: 'task_once', resumed: false });
		await again.ledger.close();
		expect(sent).toEqual(['task_once']);
		expect(table.rows.map((row) => [row.execution_id, row.state, row.task_id])).toEqual([
			['exec-A', 'accepted', 'task_once'],
			['exec-B', 'accepted', 'task_retry'],
		]);
	});
});

describe('group commit: writes that come at the same time share one sub-workflow run', () => {
	it('GroupCommit: the first at once, the rest together, each its own answer; a failure fails its group', async () => {
		const flushes: number[][] = [];
		const group = new GroupCommit<number, number>(async (inputs) => {
			flushes.push(inputs);
			if (inputs.includes(13)) throw new Error('unlucky');
			return inputs.map((input) => input * 10);
		});
		const run = async (input: number) => (await group.runAll([input]))[0];
		const first = await Promise.all([1, 2, 3, 4, 5].map(async (input) => await run(input)));
		expect(first).toEqual([10, 20, 30, 40, 50]);
		expect(flushes).toEqual([[1], [2, 3, 4, 5]]);
		const mixed = await Promise.allSettled([run(6), run(13), run(7)]);
		expect(mixed.map((end) => end.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
		expect(await run(8)).toBe(80);
		expect(flushes.slice(2)).toEqual([[6], [13, 7], [8]]);
	});
});

describe('leases', () => {
	it('close keeps the run\'s own rows held while its execution goes on; the execution\'s end lets them go, its rows only', async () => {
		const table = newTable();
		const other = await crashedRun(table, 'exec-Z', 'task_Z');
		other.lease_until = 12345;
		const { ledger } = await open(table, 'exec-A');
		await submitIn(ledger, 0, { ...FOX, prompt: 'a cat' }, META, sender('task_cat').send);
		await submitIn(ledger, 1, { ...FOX, prompt: 'a dog' }, META, sender('task_dog').send);
		expect(table.rows.slice(1).every((row) => Number(row.lease_until) > Date.now() + LEASE_MS - 5_000)).toBe(true);
		await ledger.close();
		expect(table.rows.slice(1).every((row) => Number(row.lease_until) > Date.now() + LEASE_MS - 5_000)).toBe(true);
		await executionsOver();
		expect(table.rows.map((row) => [row.execution_id, row.lease_until])).toEqual([
			['exec-Z', 12345],
			['exec-A', 0],
			['exec-A', 0],
		]);
	});

	it('a run that wrote no row closes without a write', async () => {
		const table = newTable();
		const { ledger } = await open(table, 'exec-A');
		await ledger.close();
		expect(table.calls.map((call) => call.kind)).toEqual(['get']);
	});

	describe('with jest\'s fake clock', () => {
		beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-26T12:00:00Z') }));
		afterEach(() => jest.useRealTimers());

		it('a running holder renews its leases every third of LEASE_MS, on after its node run while n8n has not saved it, and lets them go once it has', async () => {
			const table = newTable();
			// n8n's copy of the execution while it runs (progress not saved): its start, no run of the node.
			const saved: Record<string, IRunExecutionData> = { 'exec-A': { resultData: { runData: {} } } as unknown as IRunExecutionData };
			const { ledger } = await open(table, 'exec-A', { saved });
			await submitIn(ledger, 0, FOX, META, sender('task_A').send);
			const start = Date.now();
			expect(table.rows[0].lease_until).toBe(start + LEASE_MS);
			await jest.advanceTimersByTimeAsync(LEASE_MS / 3);
			expect(table.rows[0].lease_until).toBe(start + LEASE_MS / 3 + LEASE_MS);
			await jest.advanceTimersByTimeAsync(LEASE_MS / 3);
			expect(table.rows[0].lease_until).toBe(start + (2 * LEASE_MS) / 3 + LEASE_MS);
			await ledger.close();
			// The node run is over, its execution goes on for minutes: the lease goes on with it (renewed just now, at the
			// 15th turn since the close).
			await jest.advanceTimersByTimeAsync(5 * LEASE_MS);
			expect(table.rows[0].lease_until).toBe(Date.now() + LEASE_MS);
			// The execution ended: n8n saved the node run. The next turn lets the lease go, and nothing is written after.
			saved['exec-A'] = { resultData: { runData: { [NODE.name]: [{ data: { main: [[{ json: { task_id: 'task_A' } }]] } }] } } } as unknown as IRunExecutionData;
			await jest.advanceTimersByTimeAsync(RENEW_MS);
			expect(table.rows[0].lease_until).toBe(0);
			const writes = table.count('update');
			await jest.advanceTimersByTimeAsync(2 * LEASE_MS);
			expect(table.count('update')).toBe(writes);
		});

		it('a Retry meeting another run\'s planned row of the item waits its lease out: pays nothing while that run lives, pays once it is gone (found by bench:scale\'s queue case)', async () => {
			for (const holderAlive of [true, false]) {
				const table = newTable();
				// exec-A plans items 0 and 1 and pays for item 0; item 1 is still its to send.
				const holder = await open(table, 'exec-A');
				await holder.ledger.plan([0, 1].map((itemIndex) => ({ itemIndex, meta: META })));
				await submitIn(holder.ledger, 0, FOX, META, sender('task_A0').send);
				if (!holderAlive) {
					// Gone without a word: its renewals stop (closing it would let the leases go at once).
					(holder.ledger as unknown as { renewal: AbortController }).renewal.abort();
				}
				const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
				const { send, sent } = sender('task_B1');
				const answer = submitIn(ledger, 1, FOX, META, send).then(
					(submission) => submission.taskId,
					(error: Error) => error.message,
				);
				await jest.advanceTimersByTimeAsync(LEASE_MS + 2_000);
				expect(await answer).toMatch(holderAlive ? /^Not submitted: another run that is still going/ : /^task_B1$/);
				expect(sent).toEqual(holderAlive ? [] : ['task_B1']);
				await ledger.close();
				// A holder gone silent whose hold ran out fails when it ends after all: nothing goes on from it (holdRanOut).
				if (holderAlive) await holder.ledger.close();
				else await expect(holder.ledger.close()).rejects.toThrow(/hold on its tasks ran out/);
			}
		});

		it('a holder whose lease ran out (its renewals failed) sends nothing: a Retry may have taken the item over', async () => {
			const table = newTable();
			const { ledger } = await open(table, 'exec-A');
			await ledger.plan([0, 1].map((itemIndex) => ({ itemIndex, meta: META })));
			await submitIn(ledger, 0, FOX, META, sender('task_A0').send);
			// Its renewals stop reaching the database (a process frozen past its lease looks the same to others); the
			// row writes of the window still would.
			table.before.push((call) => {
				if (call.kind === 'update' && call.items.some((item) => (item.where as IDataObject)?.run_key)) throw new Error('connection lost');
			});
			await jest.advanceTimersByTimeAsync(LEASE_MS + 1_000);
			const { send, sent } = sender('task_A1');
			await expect(submitIn(ledger, 1, FOX, META, send)).rejects.toThrow(/^Not sent: this run's hold on the item/);
			expect(sent).toEqual([]);
			// Nor does task_A0 go on from it: a Retry may have taken it over (holdRanOut).
			await expect(ledger.close()).rejects.toThrow(/hold on its tasks ran out/);
		});

		it('a Retry waits out a lease still running: adopts if nobody renewed it, pays nothing if the holder did', async () => {
			for (const holderAlive of [false, true]) {
				const table = newTable();
				const orphan = await crashedRun(table, 'exec-A', 'task_A');
				orphan.lease_until = Date.now() + 10_000;
				const { ledger } = await open(table, 'exec-B', { mode: 'retry' });
				const { send, sent } = sender('task_B');
				const answer = submitIn(ledger, 0, FOX, META, send).then(
					(submission) => submission.taskId,
					(error: Error) => error.message,
				);
				await jest.advanceTimersByTimeAsync(5_000);
				expect(sent).toEqual([]);
				if (holderAlive) orphan.lease_until = Date.now() + LEASE_MS;
				await jest.advanceTimersByTimeAsync(6_000);
				expect(await answer).toMatch(holderAlive ? /^Not submitted: another run that is still going/ : /^task_A$/);
				await ledger.close();
				expect(sent).toEqual([]);
			}
		});
	});
});

describe("the ledger's sub-workflow on the next n8n (issue 53)", () => {
	it('sets the caller policy every line accepts: "workflowsFromSameOwner", never "any" (removed in n8n 3.0)', () => {
		for (const op of [{ kind: 'insert', columns: [] }, { kind: 'get', where: [] }] as TableOp[]) {
			const { settings } = tableWorkflow(TABLE, op) as { settings?: { callerPolicy?: string } };
			expect(settings?.callerPolicy).toBe('workflowsFromSameOwner');
		}
	});
});
