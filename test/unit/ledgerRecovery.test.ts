// Recover (nodes/shared/ledger/recovery.ts) against the in-memory Data Table: which rows of a workflow's Task Ledger
// it hands on (paid, holder gone, never went on), which it reports as unknown outcomes (in flight), which it leaves
// (live, went on, refused, never sent, other workflows), and that each is claimed once (compare-and-set): a second Recover, or one racing a Retry, gets none.
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { recoverTasks } from '../../nodes/shared/ledger/recovery';
import { LEDGER_COLUMNS } from '../../nodes/shared/ledger/ledgerTable';
import { FakeDataTable } from '../support/fakeDataTable';

const TABLE = 'tblRecover001';
const WORKFLOW = 'wfRecover01';

/** What n8n saved per execution (its Generate run 0): by default exec-dead's run went on with task_done in its output. */
type Saved = Record<string, { error?: unknown; data?: { main: Array<Array<{ json: IDataObject }>> } } | undefined>;
const WENT_ON: Saved = {
	'exec-dead': {
		data: { main: [[{ json: { task_id: 'task_done', status: 'SUCCESS' } }, { json: { error: 'FAILURE', task_id: 'task_failed' } }]] },
	},
};

function contextFor(table: FakeDataTable, executionId: string, saved: Saved = WENT_ON): IExecuteFunctions {
	return {
		getExecutionDataById: async (id: string) =>
			id in saved ? { resultData: { runData: { 'Generate Video': [saved[id]] } } } : undefined,
		getNode: () => ({ id: 'recover-1', name: 'Recover', type: 'genGatewayVideo', typeVersion: 1, position: [0, 0], parameters: {} }),
		getExecutionId: () => executionId,
		getWorkflow: () => ({ id: WORKFLOW, name: 'Recover', active: false }),
		getMode: () => 'manual',
		executeWorkflow: table.executeWorkflow,
		getExecutionCancelSignal: () => undefined,
		logger: { warn() {}, debug() {}, info() {}, error() {} },
	} as unknown as IExecuteFunctions;
}

const past = () => Date.now() - 1_000;

function seedRow(table: FakeDataTable, values: IDataObject): IDataObject {
	return table.seed({
		workflow_id: WORKFLOW,
		run_key: `${WORKFLOW}/node-1/0`,
		item_key: `${table.rows.length}/0123456789abcdef`,
		execution_id: 'exec-dead',
		state: 'accepted',
		task_id: '',
		lease_until: past(),
		claims: 0,
		detail: JSON.stringify({ node_name: 'Generate Video', item_index: table.rows.length, model: 'gk_1.5', prompt: 'a fox', submitted_at: '2026-11-26T10:00:00.000Z' }),
		...values,
	});
}

describe('Recover: the paid tasks of a workflow that no run delivered', () => {
	it('hands on accepted rows whose holder is gone and whose task never went on, reports rows in flight, leaves the rest', async () => {
		const table = new FakeDataTable(TABLE, LEDGER_COLUMNS);
		seedRow(table, { task_id: 'task_paid' });
		seedRow(table, { state: 'sending' });
		seedRow(table, { task_id: 'task_live', lease_until: Date.now() + 60_000 });
		seedRow(table, { task_id: 'task_done' });
		seedRow(table, { task_id: 'task_failed' });
		seedRow(table, { state: 'refused' });
		seedRow(table, { task_id: 'task_other', workflow_id: 'wfSomeoneElse' });
		// Row 9 was sent after row 8 (its accepted write named it): in flight; row 10 was never sent.
		const before = seedRow(table, { task_id: 'task_before' });
		seedRow(table, { state: 'planned' });
		seedRow(table, { state: 'planned' });
		table.row(before.id as number)!.detail = JSON.stringify({ ...JSON.parse(String(before.detail)), next_row: 9 });

		const { tasks, unknownOutcomes } = await recoverTasks(contextFor(table, 'exec-recover'), TABLE, WORKFLOW);
		expect(tasks[0]).toEqual({
			task_id: 'task_paid',
			submitted_at: '2026-11-26T10:00:00.000Z',
			model: 'gk_1.5',
			prompt: 'a fox',
			workflow_id: WORKFLOW,
			execution_id: 'exec-dead',
			node_name: 'Generate Video',
			item_index: 0,
			ledger_table: TABLE,
			ledger_row: 1,
		});
		// task_failed: its item failed after the task was paid (an error item in the saved output), so it never went on.
		expect(tasks.map((item) => item.task_id)).toEqual(['task_paid', 'task_failed', 'task_before']);
		expect(unknownOutcomes.map((item) => [item.ledger_row, item.task_id])).toEqual([[2, undefined], [9, undefined]]);
		// All five claims in one write (one sub-workflow run), each a compare-and-set of its row.
		expect(table.calls.filter((call) => call.kind === 'update').map((call) => call.items.length)).toEqual([5]);
		// Claimed: handed on (or reported) by this Recover, so nobody lists them again.
		expect(table.rows.map((row) => [row.state, row.execution_id])).toEqual([
			['recovered', 'exec-recover'],
			['reported', 'exec-recover'],
			['accepted', 'exec-dead'],
			['accepted', 'exec-dead'],
			['recovered', 'exec-recover'],
			['refused', 'exec-dead'],
			['accepted', 'exec-dead'],
			['recovered', 'exec-recover'],
			['reported', 'exec-recover'],
			['planned', 'exec-dead'],
		]);
		const again = await recoverTasks(contextFor(table, 'exec-recover-2'), TABLE, WORKFLOW);
		expect(again).toEqual({ tasks: [], unknownOutcomes: [] });
	});

	it('takes accepted rows of a run whose output never went on (not saved, or saved as failed)', async () => {
		for (const saved of [{}, { 'exec-dead': { error: { message: 'an item failed' }, ...WENT_ON['exec-dead'] } }] as Saved[]) {
			const table = new FakeDataTable(TABLE, LEDGER_COLUMNS);
			seedRow(table, { task_id: 'task_done' });
			seedRow(table, { task_id: 'task_paid' });
			const { tasks } = await recoverTasks(contextFor(table, 'exec-recover', saved), TABLE, WORKFLOW);
			expect(tasks.map((item) => item.task_id)).toEqual(['task_done', 'task_paid']);
		}
	});

	it('a row another run claims between the read and the claim is theirs: not listed', async () => {
		const table = new FakeDataTable(TABLE, LEDGER_COLUMNS);
		const row = seedRow(table, { task_id: 'task_raced' });
		table.beforeNext('update', () => {
			Object.assign(table.row(row.id as number)!, { execution_id: 'exec-retry', claims: 1 });
		});
		const { tasks } = await recoverTasks(contextFor(table, 'exec-recover'), TABLE, WORKFLOW);
		expect(tasks).toEqual([]);
		expect(table.rows[0]).toMatchObject({ state: 'accepted', execution_id: 'exec-retry', claims: 1 });
	});
});
