// Issue 51, defect 5: Recover (and a Retry) never take a task of an execution that is still running. Generate with
// the Task Ledger, not waiting, then minutes of downstream work in the same execution: n8n saves the node run only when
// the execution ends (progress not saved, its default), so until then the saved data says nothing of the tasks, and
// before the fix the node's close let the leases go: a scheduled Recover listed both tasks and they were handed on
// twice. Now the execution holds its rows until n8n has saved the run (nodes/shared/ledger/executionHold.ts). Jest's
// fake clock; the in-memory Data Table (test/support/fakeDataTable.ts).
import type { IDataObject, IExecuteFunctions, IRunExecutionData } from 'n8n-workflow';

import { ExecutionHold, LEASE_MS, RENEW_MS } from '../../nodes/shared/ledger/executionHold';
import { LEDGER_COLUMNS } from '../../nodes/shared/ledger/ledgerTable';
import { recoverTasks } from '../../nodes/shared/ledger/recovery';
import { openLedger } from '../../nodes/shared/ledger/taskLedger';
import type { TaskLedger } from '../../nodes/shared/ledger/taskLedger';
import { FakeDataTable } from '../support/fakeDataTable';

const TABLE = 'tblLive0001';
const WORKFLOW = 'wfLive01';
const NODE = { id: 'node-gen-1', name: 'Generate Video' };
const META = { model: 'sd_2.0_fast_discount', prompt: 'a lighthouse' };
const ITEMS = [{ item: 0 }, { item: 1 }];

/** What n8n's database holds of each execution (run data), and which workers were killed. */
interface World {
	table: FakeDataTable;
	saved: Record<string, IRunExecutionData>;
	killed: Set<string>;
	cancel: Map<string, AbortController>;
	/** Reads of the saved data fail (the database refuses them). */
	unreadable: boolean;
	/** Reads of the saved data answer after this long (a loaded database); undefined: at once. */
	readMs?: number;
	warnings: string[];
}

const newWorld = (): World => ({
	table: new FakeDataTable(TABLE, LEDGER_COLUMNS),
	saved: {},
	killed: new Set(),
	cancel: new Map(),
	unreadable: false,
	warnings: [],
});

/** n8n's copy of an execution that runs with progress not saved: its start only, no run of any node. */
const running = () => ({ resultData: { runData: {} } }) as unknown as IRunExecutionData;

/** n8n's copy once the execution ended: Generate's run 0 with these output items. */
const ended = (items: IDataObject[]) =>
	({ resultData: { runData: { [NODE.name]: [{ data: { main: [items.map((json) => ({ json }))] } }] } } }) as unknown as IRunExecutionData;

function contextFor(world: World, executionId: string, mode = 'webhook'): IExecuteFunctions {
	const cancel = world.cancel.get(executionId) ?? new AbortController();
	world.cancel.set(executionId, cancel);
	return {
		getNode: () => ({ ...NODE, type: 'genGatewayVideo', typeVersion: 1, position: [0, 0], parameters: {} }),
		getExecutionId: () => executionId,
		getWorkflow: () => ({ id: WORKFLOW, name: 'Live', active: false }),
		getMode: () => mode,
		getInputData: () => ITEMS.map((json) => ({ json })),
		// A killed worker's calls never answer (nothing of it reaches the database any more).
		executeWorkflow: async (...args: Parameters<FakeDataTable['executeWorkflow']>) =>
			world.killed.has(executionId) ? await new Promise<never>(() => undefined) : await world.table.executeWorkflow(...args),
		getExecutionDataById: async (id: string) => {
			if (world.unreadable) throw new Error('connection refused');
			if (world.readMs !== undefined) await new Promise((answered) => setTimeout(answered, world.readMs));
			return world.saved[id];
		},
		getExecutionCancelSignal: () => cancel.signal,
		logger: { warn: (message: string) => world.warnings.push(message), debug() {}, info() {}, error() {} },
	} as unknown as IExecuteFunctions;
}

/** Generate's node run in exec-A: both items paid (task_0, task_1), handed on, the node run over; the execution goes on. */
async function generate(world: World, executionId = 'exec-A'): Promise<void> {
	world.saved[executionId] = running();
	const ledger = (await openLedger(contextFor(world, executionId), TABLE, 0)) as TaskLedger;
	await ledger.plan(ITEMS.map((_, itemIndex) => ({ itemIndex, meta: META })));
	for (const itemIndex of ITEMS.keys()) {
		await ledger.submit(META, { itemIndex, gate: async (call) => await call() }, async (lane) => await lane.gate(async () => `task_${itemIndex}`));
	}
	await ledger.close();
}

const recover = async (world: World, executionId: string) => {
	const { tasks, unknownOutcomes } = await recoverTasks(contextFor(world, executionId, 'trigger'), TABLE, WORKFLOW);
	return { tasks: tasks.map((task) => task.task_id), unknownOutcomes: unknownOutcomes.map((row) => row.ledger_row) };
};

const NOTHING = { tasks: [], unknownOutcomes: [] };

beforeEach(() => jest.useFakeTimers({ now: new Date('2026-12-08T09:00:00Z') }));
afterEach(async () => {
	// Every execution is over (a killed worker's hold never answers: not awaited).
	void ExecutionHold.releaseAll();
	await jest.advanceTimersByTimeAsync(0);
	jest.useRealTimers();
});

describe('Recover and a Retry spare an execution that is still running (issue 51)', () => {

	it('Recover during the downstream work after Generate\'s node run lists nothing of it; once the execution ended, what did not go on', async () => {
		const world = newWorld();
		await generate(world);
		// Minutes of downstream work; a scheduled Recover every minute meanwhile.
		for (let minute = 1; minute <= 5; minute++) {
			await jest.advanceTimersByTimeAsync(LEASE_MS);
			expect(await recover(world, `exec-recover-${minute}`)).toEqual(NOTHING);
		}
		expect(world.table.rows.map((row) => [row.state, row.execution_id])).toEqual([
			['accepted', 'exec-A'],
			['accepted', 'exec-A'],
		]);
		// The execution ends; n8n saves it: task_0 went on, item 1 became an error item downstream of its POST.
		world.saved['exec-A'] = ended([{ task_id: 'task_0' }, { task_id: 'task_1', error: 'download failed' }]);
		await jest.advanceTimersByTimeAsync(RENEW_MS);
		expect(world.table.rows.map((row) => row.lease_until)).toEqual([0, 0]);
		expect(await recover(world, 'exec-recover-after')).toEqual({ tasks: ['task_1'], unknownOutcomes: [] });
	});

	it('a worker killed during the downstream work: its rows are orphans once their lease ran out, and Recover lists them', async () => {
		const world = newWorld();
		await generate(world);
		await jest.advanceTimersByTimeAsync(2 * LEASE_MS);
		world.killed.add('exec-A');
		expect(await recover(world, 'exec-recover-1')).toEqual(NOTHING);
		await jest.advanceTimersByTimeAsync(LEASE_MS + 1_000);
		expect(await recover(world, 'exec-recover-2')).toEqual({ tasks: ['task_0', 'task_1'], unknownOutcomes: [] });
	});

	it('a cancelled execution lets its rows go at once; one that n8n deleted when it ended (not kept) at the next turn', async () => {
		const world = newWorld();
		await generate(world, 'exec-A');
		await generate(world, 'exec-B');
		world.cancel.get('exec-A')!.abort();
		await jest.advanceTimersByTimeAsync(0);
		expect(world.table.rows.map((row) => [row.execution_id, Number(row.lease_until) > Date.now()])).toEqual([
			['exec-A', false],
			['exec-A', false],
			['exec-B', true],
			['exec-B', true],
		]);
		delete world.saved['exec-B'];
		await jest.advanceTimersByTimeAsync(RENEW_MS);
		expect(world.table.rows.every((row) => row.lease_until === 0)).toBe(true);
	});

	it('an execution whose saved data cannot be read three times in a row stops renewing (warned): its rows are orphans a lease later', async () => {
		const world = newWorld();
		await generate(world);
		world.unreadable = true;
		await jest.advanceTimersByTimeAsync(3 * RENEW_MS);
		expect(world.warnings).toEqual([expect.stringMatching(/execution exec-A: reading its saved data failed: 3 times in a row/)]);
		const renewals = world.table.count('update');
		await jest.advanceTimersByTimeAsync(LEASE_MS);
		expect(world.table.count('update')).toBe(renewals);
		expect(await recover(world, 'exec-recover')).toEqual({ tasks: ['task_0', 'task_1'], unknownOutcomes: [] });
	});

	it('a Retry of another execution with the same items does not take over the tasks of an execution still running', async () => {
		const world = newWorld();
		await generate(world);
		await jest.advanceTimersByTimeAsync(LEASE_MS);
		// exec-X (the same items) was taken for crashed before it wrote a row; its Retry meets exec-A's rows.
		const sent: string[] = [];
		const retry = (await openLedger(contextFor(world, 'exec-X-retry', 'retry'), TABLE, 0)) as TaskLedger;
		const answer = retry
			.submit(META, { itemIndex: 0, gate: async (call) => await call() }, async (lane) => await lane.gate(async () => (sent.push('task_new'), 'task_new')))
			.then((submission) => submission.taskId, (error: Error) => error.message);
		await jest.advanceTimersByTimeAsync(LEASE_MS + 2_000);
		// It waited the lease out once; exec-A renewed it meanwhile: alive, and its task is not taken (nothing sent).
		expect(await answer).toMatch(/^Not submitted: another run that is still going .* took over the task/);
		expect(sent).toEqual([]);
		expect(world.table.rows.map((row) => [row.execution_id, row.claims])).toEqual([
			['exec-A', 0],
			['exec-A', 0],
		]);
		await retry.close();
	});
});

describe('a slow read of the saved data (found by an attack on the fix)', () => {

	it('reads of 45 s while the execution runs: the leases are renewed every turn meanwhile, Recover lists nothing for 5 minutes', async () => {
		// Before: the renewal waited for the read, so reads of 45 s let the leases lapse and Recover took both tasks.
		const world = newWorld();
		await generate(world);
		world.readMs = 45_000;
		for (let step = 1; step <= 15; step++) {
			await jest.advanceTimersByTimeAsync(RENEW_MS);
			expect({ step, ...(await recover(world, `exec-recover-${step}`)) }).toEqual({ step, ...NOTHING });
		}
		expect(world.warnings).toEqual([]);
	});

	it('reads that never answer count as failed: after three the hold warns, and the rows are orphans a lease later', async () => {
		const world = newWorld();
		await generate(world);
		world.readMs = 1e9;
		// Each turn: a wait, then a read given a turn's time (3 turns of 2 x RENEW_MS).
		await jest.advanceTimersByTimeAsync(7 * RENEW_MS);
		expect(world.warnings).toEqual([expect.stringMatching(/did not answer/)]);
		await jest.advanceTimersByTimeAsync(LEASE_MS);
		// The database answers again (Recover reads saved data too): the rows are orphans now, as a dead worker's.
		world.readMs = undefined;
		expect((await recover(world, 'exec-recover')).tasks.sort()).toEqual(['task_0', 'task_1']);
	});
});
