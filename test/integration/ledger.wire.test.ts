/**
 * Generate with Options → Task Ledger through n8n's engine (test/harness), its sub-workflows answered by an in-memory
 * Data Table (test/support/fakeDataTable.ts) and its POSTs by a loopback server that looks at the table when each one
 * arrives: the row is written before the POST and records the task id after; a Retry of the run (mode `retry`,
 * another execution) over the same table pays nothing and outputs the same tasks; any other new execution pays again;
 * without the option no sub-workflow runs. The ledger's logic in detail: test/unit/taskLedger.test.ts.
 */
import type { IDataObject, INodeExecutionData, WorkflowExecuteMode } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import { ExecutionHold } from '../../nodes/shared/ledger/executionHold';
import { LEDGER_COLUMNS } from '../../nodes/shared/ledger/ledgerTable';
import { FakeDataTable } from '../support/fakeDataTable';
import { generateParams } from '../support/faultTable';
import { FAST } from '../support/videoRun';
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';

const API_KEY = 'sentinel-key-ledger-4c3b2a';
const TABLE = 'tblLedgerWire01';
const SUBMIT = '/v1/tasks/vendor';
const PROMPTS = ['a fox', 'a heron', 'a kite'];

/**
 * The prompt each row was written for (its detail), with its state and task id. A `planned` row that another row names
 * as sent after it (`next_row`: that row's accepted write marked it before its POST) reads `sent`.
 */
const rowsOf = (table: FakeDataTable) => {
	const named = table.rows.map((row) => Number(JSON.parse(String(row.detail)).next_row));
	return table.rows.map((row) => ({
		prompt: JSON.parse(String(row.detail)).prompt as string,
		state: row.state === 'planned' && named.includes(Number(row.id)) ? 'sent' : row.state,
		task_id: row.task_id,
		execution_id: row.execution_id,
	}));
};

interface Service {
	server: ScriptedServer;
	/** What the table held for the prompt of each POST, when the POST arrived. */
	seenAtPost: Array<{ prompt: string; rows: ReturnType<typeof rowsOf> }>;
}

/** Answers every POST with a new task id, after noting which ledger rows of its prompt exist at that moment. */
async function service(table: FakeDataTable): Promise<Service> {
	const seenAtPost: Service['seenAtPost'] = [];
	let next = 0;
	const server = await startScriptedServer((req, res) => {
		if (req.method !== 'POST' || req.path !== SUBMIT) return sendJson(res, 404, { error: { message: 'not here' } });
		const prompt = (JSON.parse(req.body) as { prompt: string }).prompt;
		seenAtPost.push({ prompt, rows: rowsOf(table).filter((row) => row.prompt === prompt) });
		sendJson(res, 200, { task_id: `task_${(next++).toString(16).padStart(4, '0')}` });
	});
	return { server, seenAtPost };
}

async function generate(
	server: ScriptedServer,
	table: FakeDataTable,
	{ executionId, mode, ledger = true, maxConcurrency }: { executionId: string; mode?: WorkflowExecuteMode; ledger?: boolean; maxConcurrency?: number },
): Promise<RunResult> {
	const options = { ...FAST, ...(ledger ? { taskLedger: TABLE } : {}), ...(maxConcurrency ? { maxConcurrency } : {}) };
	return await runWorkflow({
		nodes: [
			{
				name: 'Generate Video',
				type: 'genGatewayVideo',
				parameters: generateParams('={{ $json.prompt }}', { waitForCompletion: false, options }),
				credentials: true,
			},
		],
		input: PROMPTS.map((prompt) => ({ prompt })),
		credentials: { baseUrl: server.url, apiKey: API_KEY },
		executionId,
		mode,
		executeWorkflow: table.engineExecuteWorkflow,
	});
}

const json = (items: INodeExecutionData[]): IDataObject[] => items.map((item) => item.json);

describe('Generate with a Task Ledger, through n8n\'s engine', () => {
	let table: FakeDataTable;
	let svc: Service;
	beforeEach(async () => {
		table = new FakeDataTable(TABLE, LEDGER_COLUMNS);
		svc = await service(table);
	});
	afterEach(async () => {
		await ExecutionHold.releaseAll();
		await svc.server.close();
	});

	it('each item\'s row is written before its POST and holds its task id after', async () => {
		const result = await generate(svc.server, table, { executionId: 'exec-first' });
		expect(result.error).toBeUndefined();
		const out = json(result.output('Generate Video'));
		const fields = out.map((item) => [item.status, item.resumed, item.ledger_table]);
		expect(fields).toEqual(PROMPTS.map(() => ['SUBMITTED', false, TABLE]));
		// When each POST arrived, its prompt's row was there, marked as sent (`sending` alone for the first, named by the
		// accepted write of the one before for the others), with no task id yet.
		expect(svc.seenAtPost).toEqual(
			PROMPTS.map((prompt, index) => ({
				prompt,
				rows: [{ prompt, state: index === 0 ? 'sending' : 'sent', task_id: '', execution_id: 'exec-first' }],
			})),
		);
		// After it: `accepted` with the task id the service gave (whether it went on is what n8n saved of the run).
		const accepted = table.calls
			.filter((call) => call.kind === 'update')
			.flatMap((call) => call.items.map((item) => item.set as IDataObject))
			.filter((set) => set.state === 'accepted')
			.map((set) => set.task_id);
		expect(accepted.sort()).toEqual(out.map((item) => item.task_id).sort());
		const recorded = (item: IDataObject, index: number) => ({
			prompt: PROMPTS[index],
			state: 'accepted',
			task_id: item.task_id,
			execution_id: 'exec-first',
		});
		expect(rowsOf(table)).toEqual(out.map(recorded));
		// Held past the node run (the execution may go on: executionHold.ts), let go once its hold sees it over.
		expect(table.rows.every((row) => Number(row.lease_until) > Date.now())).toBe(true);
		await ExecutionHold.releaseAll();
		expect(table.rows.map((row) => row.lease_until)).toEqual([0, 0, 0]);
	});

	it('a Retry (another execution, mode retry) after a crash pays nothing, outputs the same tasks, resumed', async () => {
		const first = await generate(svc.server, table, { executionId: 'exec-crashed' });
		const paid = json(first.output('Generate Video')).map((item) => item.task_id);
		// What a SIGKILL after the POSTs leaves, once its lease has run out: accepted rows nobody renews.
		for (const row of table.rows) Object.assign(row, { state: 'accepted', lease_until: Date.now() - 1_000 });
		const posts = postsTo(svc.server, SUBMIT).length;

		const retry = await generate(svc.server, table, { executionId: 'exec-retry', mode: 'retry' });
		expect(retry.error).toBeUndefined();
		expect(postsTo(svc.server, SUBMIT)).toHaveLength(posts);
		const out = json(retry.output('Generate Video'));
		expect(out.map((item) => [item.task_id, item.resumed])).toEqual(paid.map((taskId) => [taskId, true]));
		const rows = rowsOf(table).map((row) => [row.state, row.execution_id]);
		expect(rows).toEqual(PROMPTS.map(() => ['accepted', 'exec-retry']));
	});

	it('a Retry over a row whose POST had an unknown outcome sends nothing and says why', async () => {
		await generate(svc.server, table, { executionId: 'exec-crashed' });
		// A SIGKILL while the second POST was on the wire.
		Object.assign(table.rows[1], { state: 'sending', task_id: '' });
		for (const row of table.rows) row.lease_until = Date.now() - 1_000;
		const posts = postsTo(svc.server, SUBMIT).length;

		const retry = await generate(svc.server, table, { executionId: 'exec-retry', mode: 'retry' });
		expect(retry.nodeError('Generate Video')?.message).toMatch(/^Not resubmitted: an earlier run of this item/);
		expect(postsTo(svc.server, SUBMIT)).toHaveLength(posts);
	});

	it('a Retry with an unknown outcome in its first item still pays for the never-sent items', async () => {
		// Execution ids of their own: n8n's Retry On Fail memory (submissionGuard) is per process and execution.
		await generate(svc.server, table, { executionId: 'exec-crashed-unknown' });
		// A SIGKILL while the first POST was on the wire: the other two items never reached their POST.
		table.rows.splice(1);
		Object.assign(table.rows[0], { state: 'sending', task_id: '', lease_until: Date.now() - 1_000 });
		const posts = postsTo(svc.server, SUBMIT).length;

		// One request at a time: the last item reaches its slot after the first one failed.
		const retry = await generate(svc.server, table, { executionId: 'exec-retry-unknown', mode: 'retry', maxConcurrency: 1 });
		expect(retry.nodeError('Generate Video')?.message).toMatch(/^Not resubmitted/);
		// The unknown one is never resent; the two others are paid once, though the run fails.
		expect(postsTo(svc.server, SUBMIT).slice(posts).map((post) => JSON.parse(post.body).prompt)).toEqual(PROMPTS.slice(1));
		const rows = rowsOf(table).map((row) => [row.prompt, row.state, row.execution_id]);
		expect(rows).toEqual([
			[PROMPTS[0], 'sending', 'exec-retry-unknown'],
			[PROMPTS[1], 'accepted', 'exec-retry-unknown'],
			[PROMPTS[2], 'accepted', 'exec-retry-unknown'],
		]);
	});

	it('a new execution that is not a Retry pays again, in new rows', async () => {
		const first = await generate(svc.server, table, { executionId: 'exec-one' });
		for (const row of table.rows) Object.assign(row, { state: 'accepted', lease_until: Date.now() - 1_000 });
		const again = await generate(svc.server, table, { executionId: 'exec-two', mode: 'trigger' });
		expect(again.error).toBeUndefined();
		expect(postsTo(svc.server, SUBMIT)).toHaveLength(2 * PROMPTS.length);
		const before = json(first.output('Generate Video')).map((item) => item.task_id);
		const out = json(again.output('Generate Video'));
		expect(out.every((item) => item.resumed === false && !before.includes(item.task_id))).toBe(true);
		const holders = rowsOf(table).map((row) => row.execution_id);
		expect(holders).toEqual([...PROMPTS.map(() => 'exec-one'), ...PROMPTS.map(() => 'exec-two')]);
	});

	it('without the option nothing changes: no sub-workflow, no ledger_table', async () => {
		const result = await generate(svc.server, table, { executionId: 'exec-plain', ledger: false });
		expect(result.error).toBeUndefined();
		expect(postsTo(svc.server, SUBMIT)).toHaveLength(PROMPTS.length);
		expect(json(result.output('Generate Video')).every((item) => item.ledger_table === undefined)).toBe(true);
		expect(table.calls).toEqual([]);
	});
});
