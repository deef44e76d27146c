// Adversarial review of cb49ba5 (item_key = the input item, notHeldElsewhere, holdLost): sequences in which a task is
// paid twice, an accepted task is forgotten, an item is handed another item's video, or legitimate work is refused.
// Same fake Data Table and minimal context as taskLedger.test.ts; here the context's input items may carry binary.
// Every test here failed on cb49ba5; all are fixed: notHeldElsewhere reads what the holder did meanwhile; a Retry
// skips another request's row when a row of its own request is there; a row of the same position and request counts
// too (the crashed run's unknown outcome is met when the nodes before Generate stamped the item anew); a window write
// counts only if it changed its row while the hold ran (markSent); a lost `accepted` compare-and-set records the task
// apart (recordApart); a file's id is in the item key. An open defect found later goes here as `it.failing` (passing
// while the defect is there; when a fix lands, jest reports it as failing: make it a plain `it` then).
import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { ExecutionHold } from '../../nodes/shared/ledger/executionHold';
import { LEDGER_COLUMNS } from '../../nodes/shared/ledger/ledgerTable';
import { itemKeys, LEASE_MS, openLedger } from '../../nodes/shared/ledger/taskLedger';
import type { TaskLedger } from '../../nodes/shared/ledger/taskLedger';
import { OUTCOME_UNKNOWN } from '../../nodes/shared/transport/errors';
import type { Lane } from '../../nodes/shared/transport/lane';
import { FakeDataTable } from '../support/fakeDataTable';

const TABLE = 'tblLedger0001';
const NODE = { id: 'node-gen-1', name: 'Generate Video' };
const WORKFLOW = 'wfLedger01';
const META = { model: 'sd_2.0_fast_discount', prompt: 'a fox' };

interface RunOptions {
	mode?: string;
	items?: INodeExecutionData[];
}

function contextFor(table: FakeDataTable, executionId: string, { mode = 'manual', items = [{ json: { item: 0 } }] }: RunOptions) {
	return {
		getNode: () => ({ ...NODE, type: 'genGatewayVideo', typeVersion: 1, position: [0, 0], parameters: {} }),
		getExecutionId: () => executionId,
		getWorkflow: () => ({ id: WORKFLOW, name: 'Ledger', active: false }),
		getMode: () => mode,
		getInputData: () => items,
		executeWorkflow: table.executeWorkflow,
		// Nothing saved: every run here was killed or failed before n8n saved its output.
		getExecutionDataById: async () => undefined,
		getExecutionCancelSignal: () => undefined,
		logger: { warn() {}, debug() {}, info() {}, error() {} },
	} as unknown as IExecuteFunctions;
}

async function open(table: FakeDataTable, executionId: string, options: RunOptions = {}): Promise<TaskLedger> {
	return (await openLedger(contextFor(table, executionId, options), TABLE, 0)) as TaskLedger;
}

const direct: Lane['gate'] = async (call) => await call();

async function submit(ledger: TaskLedger, itemIndex: number, send: () => Promise<string>, meta = META) {
	return await ledger.submit(meta, { itemIndex, gate: direct }, async (lane) => await lane.gate(send));
}

/** Every POST of every run, in one list (what the service charged). */
function service() {
	const posts: string[] = [];
	const send = (taskId: string) => async () => {
		posts.push(taskId);
		return taskId;
	};
	return { posts, send };
}

const newTable = () => new FakeDataTable(TABLE, LEDGER_COLUMNS);
// Every execution is over after its test: its hold lets its leases go (executionHold.ts).
afterEach(async () => await ExecutionHold.releaseAll());
const expire = (table: FakeDataTable) => table.rows.forEach((row) => (row.lease_until = Date.now() - 1_000));
const outcomeUnknown = () => Object.assign(new Error('socket hang up'), { context: { [OUTCOME_UNKNOWN]: true } });

/** A picture as n8n's binary data service describes it: fileSize is pretty-printed ("1.23 MB"), never the byte count. */
const picture = (id: string): IBinaryData => ({
	data: 'filesystem-v2',
	id: `filesystem-v2:workflows/${WORKFLOW}/executions/${id}/binary_data/${id}`,
	mimeType: 'image/jpeg',
	fileName: 'photo.jpg',
	fileExtension: 'jpg',
	fileSize: '1.23 MB',
});

describe('review of cb49ba5: a Retry waiting out another run\'s live planned row (notHeldElsewhere)', () => {
	beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-26T12:00:00Z') }));
	afterEach(() => jest.useRealTimers());

	it('does not pay an item that the holder sent, had accepted and let go while the Retry waited (the re-read row\'s state is ignored)', async () => {
		const table = newTable();
		const { posts, send } = service();
		// exec-A (taken for crashed by n8n, but alive) planned item 0.
		const holder = await open(table, 'exec-A');
		await holder.plan([{ itemIndex: 0, meta: META }]);
		const retry = await open(table, 'exec-B', { mode: 'retry' });
		const answer = submit(retry, 0, send('task_B0')).then((s) => s.taskId, (error: Error) => error.message);
		await jest.advanceTimersByTimeAsync(1_000);
		// While the Retry waits: exec-A sends item 0 (its own `sending` write: no next_row names it), the service accepts
		// it, and exec-A's execution ends (its hold lets the lease go).
		await submit(holder, 0, send('task_A0'));
		await holder.close();
		await ExecutionHold.releaseAll();
		expect(table.rows[0]).toMatchObject({ state: 'accepted', task_id: 'task_A0', lease_until: 0, claims: 0 });
		await jest.advanceTimersByTimeAsync(LEASE_MS + 2_000);
		expect(await answer).toMatch(/^Not submitted: another run that is still going \(execution exec-A\)/);
		await retry.close();
		// cb49ba5: ['task_A0', 'task_B0'], the same item of the same execution lineage paid twice.
		expect(posts).toEqual(['task_A0']);
	});

	it('does not pay an item whose holder checked its hold just in time but whose `sending` write landed after the Retry\'s wait', async () => {
		const table = newTable();
		const { posts, send } = service();
		const holder = await open(table, 'exec-A');
		await holder.plan([{ itemIndex: 0, meta: META }]);
		// The database is struggling for the holder's worker: its lease renewals fail...
		table.before.push((call) => {
			const renewal = (item: IDataObject) => (item.where as IDataObject)?.execution_id === 'exec-A';
			if (call.kind === 'update' && call.items.some(renewal)) throw new Error('connection lost');
		});
		const retry = await open(table, 'exec-B', { mode: 'retry' });
		const answer = submit(retry, 0, send('task_B0')).then((s) => s.taskId, (error: Error) => error.message);
		// ...and the holder's `sending` write for item 0, started half a second before its hold runs out (holdLost
		// passes), takes three seconds to commit (a busy database; tableRun runs a SQLITE_BUSY write up to 5 times).
		let delayed = false;
		table.before.push(async (call) => {
			const set = call.items[0]?.set as IDataObject | undefined;
			if (delayed || call.kind !== 'update' || set?.state !== 'sending' || (call.items[0].where as IDataObject).id !== 1) return;
			delayed = true;
			await new Promise((resolve) => setTimeout(resolve, 3_000));
		});
		await jest.advanceTimersByTimeAsync(LEASE_MS - 500);
		const holderAnswer = submit(holder, 0, send('task_A0')).then((s) => s.taskId, (error: Error) => error.message);
		await jest.advanceTimersByTimeAsync(5_000);
		const answers = await Promise.all([answer, holderAnswer]);
		await retry.close();
		// Its hold ran out while it went on: it fails, so that nothing goes on from it (holdRanOut).
		await expect(holder.close()).rejects.toThrow(/hold on its tasks ran out/);
		// cb49ba5: both POSTs go out. The holder's write is a compare-and-set on `claims`, which the Retry never bumps,
		// and the holder does not check that its write changed the row. Fixed: a mark that commits after the hold ran
		// out does not send (markSent), and is taken back (the row is planned: nothing was sent under it).
		expect(posts).toEqual(['task_B0']);
		expect(answers).toEqual(['task_B0', expect.stringMatching(/^Not sent: this run's hold on the item/)]);
		expect(table.row(1)).toMatchObject({ state: 'planned', task_id: '' });
	});
});

describe('review of cb49ba5: the item key across executions (a Retry reads every execution\'s rows of the node run)', () => {
	it('two executions\' items with the same JSON and a picture of the same name, type and pretty size are not swapped by a Retry', async () => {
		const table = newTable();
		const { posts, send } = service();
		// Two form uploads ("photo.jpg", different pictures, both 1.23 MB as n8n prints it), same prompt; both paid and
		// killed before n8n saved their output. exec-2 ran first.
		for (const execution of ['exec-2', 'exec-1']) {
			const ledger = await open(table, execution, { items: [{ json: { prompt: 'animate' }, binary: { data: picture(execution) } }] });
			await submit(ledger, 0, send(`task_of_${execution}`));
			await ledger.close();
		}
		expire(table);
		// cb49ba5: one item_key for both (name, type, pretty size). Fixed: the file's id (n8n's, kept by a Retry) is in
		// the key, and a row of the item itself goes before one that only stands at its position with its request.
		expect(new Set(table.rows.map((row) => row.item_key)).size).toBe(2);
		const retry = await open(table, 'exec-1-retry', {
			mode: 'retry',
			items: [{ json: { prompt: 'animate' }, binary: { data: picture('exec-1') } }],
		});
		const taken = await submit(retry, 0, send('task_new'));
		await retry.close();
		// cb49ba5: 'task_of_exec-2', exec-1's picture is handed the video made from exec-2's picture.
		expect(taken.taskId).toBe('task_of_exec-1');
		expect(posts).toHaveLength(2);
	});

	it('item keys tell files apart by n8n\'s file id, or by an in-memory file\'s content, and stay the same for the same file', () => {
		const inMemory = (data: string): IBinaryData => ({ data, mimeType: 'image/jpeg', fileName: 'photo.jpg', fileSize: '1.23 MB' });
		const key = (file: IBinaryData) => itemKeys([{ json: { prompt: 'animate' }, binary: { data: file } }])[0];
		expect(key(picture('exec-1'))).toBe(key(picture('exec-1')));
		expect(key(picture('exec-1'))).not.toBe(key(picture('exec-2')));
		expect(key(inMemory('QUJD'))).toBe(key(inMemory('QUJD')));
		expect(key(inMemory('QUJD'))).not.toBe(key(inMemory('QUJE')));
		// A large file is read at both ends only: a change there tells it apart.
		const large = 'A'.repeat(300_000);
		expect(key(inMemory(large))).not.toBe(key(inMemory(`${large.slice(1)}B`)));
	});

	it('a Retry is not refused for its own crashed run\'s task because another execution\'s orphan of an identical item asked for another prompt', async () => {
		const table = newTable();
		const { send } = service();
		// The item reaching Generate is the same in every execution ({}), the prompt comes from the trigger
		// ({{ $('Webhook').item.json.body.prompt }}). exec-2 (a cat) and exec-1 (a fox) both paid and were killed.
		for (const [execution, prompt] of [['exec-2', 'a cat'], ['exec-1', 'a fox']]) {
			const ledger = await open(table, execution, { items: [{ json: {} }] });
			await submit(ledger, 0, send(`task_of_${execution}`), { ...META, prompt });
			await ledger.close();
		}
		expire(table);
		const retry = await open(table, 'exec-1-retry', { mode: 'retry', items: [{ json: {} }] });
		// cb49ba5: "Not submitted: the run this Retry takes over (execution exec-2) paid … for another request": adopt()
		// throws at the first candidate that does not match instead of trying the next (exec-1's own, which matches).
		const taken = await submit(retry, 0, send('task_new'), { ...META, prompt: 'a fox' });
		await retry.close();
		expect(taken.taskId).toBe('task_of_exec-1');
	});

	it('an unknown outcome is not resent by the Retry of a crashed execution whose nodes before Generate ran again and stamped the item', async () => {
		const table = newTable();
		const { posts, send } = service();
		// Webhook → Set (received_at: {{ $now }}) → Generate; the worker dies while item 0's POST is out (`sending`).
		const crashed = await open(table, 'exec-A', { items: [{ json: { prompt: 'a fox', received_at: '12:00:00' } }] });
		await expect(submit(crashed, 0, async () => await Promise.reject(outcomeUnknown()))).rejects.toThrow('socket hang up');
		await crashed.close();
		expect(table.rows[0]).toMatchObject({ state: 'sending', task_id: '' });
		expire(table);
		// n8n saved nothing but the trigger's data (no progress saving in queue mode): the Retry runs Set again.
		const retry = await open(table, 'exec-B', { mode: 'retry', items: [{ json: { prompt: 'a fox', received_at: '12:07:31' } }] });
		const answer = submit(retry, 0, send('task_B0')).then((s) => s.taskId, (error: Error) => error.message);
		const result = await answer;
		await retry.close();
		// cb49ba5: 'task_B0' sent. With item_key = item index (before cb49ba5) the row was met and the item refused.
		expect(posts).toEqual([]);
		expect(result).toMatch(/^Not resubmitted/);
	});
});

describe('review of cb49ba5: a holder paused past its lease', () => {
	it('an accepted task whose `accepted` write lost its compare-and-set (a Retry claimed the row meanwhile) is still recorded', async () => {
		const table = newTable();
		const holder = await open(table, 'exec-A');
		// The holder's POST is out; n8n stalls past the lease; a Retry adopts the `sending` row (claims 0 → 1) and fails
		// the item as an unknown outcome; then the service's answer reaches the holder: task_A0 accepted.
		const answer = submit(holder, 0, async () => {
			Object.assign(table.row(1)!, { execution_id: 'exec-B', claims: 1, lease_until: Date.now() + LEASE_MS });
			return 'task_A0';
		});
		expect((await answer).taskId).toBe('task_A0');
		await holder.close();
		// cb49ba5: the write matched no row and nobody noticed (writeWindow ignores an empty answer; leave() counts it
		// as written, so the close does not write it again): the paid task's id is in no row of the ledger. Fixed: a
		// lost compare-and-set records the task in a row of the holder's own (recordApart), which Recover lists.
		expect(table.rows.some((row) => row.task_id === 'task_A0')).toBe(true);
		// Held while exec-A goes on, let go once it is over.
		await ExecutionHold.releaseAll();
		expect(table.rows[1]).toMatchObject({ state: 'accepted', task_id: 'task_A0', execution_id: 'exec-A', lease_until: 0 });
	});
});
