// Time: about 145 s (measured 142 s: Redis, PostgreSQL, a main and a worker about 70 s; the run, the kill, n8n
// marking the execution, the Retry with its 15 s tasks, two Recover runs about 70 s).
// Issue 30 in n8n 2.41.1's queue mode (a main and a worker, Redis, PostgreSQL): Webhook → Split Out → Generate with
// Options → Task Ledger (an n8n Data Table) submits 24 prompts one request at a time; the worker is SIGKILLed while it
// submits (8 tasks accepted and recorded, the 9th POST in flight: the mock holds it unanswered) and a new worker
// starts. n8n marks the execution crashed (or failed), and Retry through n8n's REST API, as the editor's button does,
// takes over the 8 tasks the dead run paid for, never resends the 9th (its outcome is unknown: an error item says so,
// its row stays `sending`) and pays for the other 15: no prompt is POSTed twice, every task created is delivered whole.
import { spawnMockProcess, type MockClient } from '../mock/process';
import { timed } from '../timing/phases';
import { listExecutions, readExecution, waitForExecutions, waitForWebhook } from './workflows/executions';
import { createLedgerTable, ledgerRows } from './workflows/ledgerTable';
import { GENERATE_NODE, ledgerWorkflow, own, postWebhook, RECOVER_NODE, recoverWorkflow, until } from './workflows/ledgerWorkflow';
import { SETUP_TIMEOUT, submissionsIn } from './workflows/runs';
import { randomId } from './n8n';
import { startQueueCluster, type QueueCluster } from './queue/cluster';

const PATH = 'ledger-queue-crash';
const WORKFLOW_ID = 'ggLedgerQueue001';
const RECOVER_PATH = 'ledger-queue-recover';
const RECOVER_ID = 'ggLedgerRecover01';
const FINISHED = ['success', 'error', 'crashed', 'canceled'];
const PROMPTS = Array.from({ length: 24 }, (_, i) => `Ledger prompt ${i + 1} [[queuedMs=0]] [[runMs=15000]]`);
const KILL_AFTER = 8;

const promptOf = (entry: { body?: unknown }) => String((entry.body as { prompt?: unknown } | undefined)?.prompt ?? '');

/** A row's state, `sent` for one marked as sent with no answer recorded (`sending`, or `planned` and named by a next_row). */
function sentOrState(rows: Array<{ id: number; state: string; detail: string }>) {
	const named = rows.map((row) => Number(JSON.parse(row.detail).next_row));
	return (row: { id: number; state: string }) =>
		row.state === 'sending' || (row.state === 'planned' && named.includes(Number(row.id))) ? 'sent' : row.state;
}

describe('task ledger in queue mode: a worker killed while submitting, then Retry: nothing paid twice, nothing lost', () => {
	const apiKey = `sk-e2e-ledger-queue-${randomId(24)}`;
	let mock: MockClient;
	let cluster: QueueCluster;

	beforeAll(async () => {
		// The tasks' links outlast the test: the Retry downloads the 8 it adopts only once the dead run's lease has ended
		// (40–61 s after the kill), and under load that passed the mock's default 60 s (a 410: an error item, no
		// delivery; the likely cause of a failure seen once in CI, see test/e2e/README.md).
		mock = await spawnMockProcess({ apiKey, defaults: { queuedMs: 0, runMs: 1000, urlTtlMs: 15 * 60_000 } });
		cluster = await startQueueCluster({
			baseUrl: mock.url,
			apiKey,
			// n8n's leader marks executions whose job is gone `crashed` every minute (default: 180).
			env: { N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '1' },
			extraWorkflows: (credential) => [
				ledgerWorkflow({ id: WORKFLOW_ID, webhookPath: PATH, credential, maxConcurrency: 1, continueOnFail: true }),
				recoverWorkflow({ id: RECOVER_ID, webhookPath: RECOVER_PATH, credential }),
			],
		});
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await cluster?.stop();
		await mock?.stop();
	});

	it('SIGKILL mid-submission, Retry over REST: each prompt POSTed once, every created task delivered exact', async () => {
		const { main } = cluster;
		const cookie = await main.ownerSession();
		const table = await createLedgerTable(main, cookie, 'Video task ledger');
		await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', skip: KILL_AFTER, times: 1, kind: 'hang' }]);
		await waitForWebhook(main, PATH);
		expect(await postWebhook(main.url, PATH, { ledger: table.id, prompts: PROMPTS })).toBe(200);

		// The worker dies with 8 tasks recorded and the 9th POST in flight (the mock never answers it), as an OOM kill would.
		await until(`${KILL_AFTER} accepted rows`, 120_000, async () => {
			const rows = await ledgerRows(main, cookie, table);
			return rows.filter((row) => row.state === 'accepted').length >= KILL_AFTER ? rows : undefined;
		});
		// Killed once the 9th POST has reached the mock (it never answers): that task is in flight for sure.
		await until(`POST ${KILL_AFTER + 1} at the mock`, 60_000, async () =>
			submissionsIn(await mock.log()).length > KILL_AFTER ? true : undefined,
		);
		await timed('run', 'worker SIGKILL and restart', () => cluster.restartWorker());

		const [dead] = own(
			await waitForExecutions(main, cookie, WORKFLOW_ID, (list) => own(list).length === 1 && FINISHED.includes(own(list)[0].status), 240_000),
		);
		expect(dead.status).toMatch(/crashed|error/);
		const before = await ledgerRows(main, cookie, table);
		// 8 recorded tasks, the 9th marked as sent before its POST (the 8th's accepted write names it in next_row); the 15
		// items still waiting for the slot are `planned` (nothing sent: neither Retry nor Recover takes them for paid).
		const state = sentOrState(before);
		const waiting = PROMPTS.length - KILL_AFTER - 1;
		expect(before.map(state).sort()).toEqual(
			[...Array(KILL_AFTER).fill('accepted'), ...Array(waiting).fill('planned'), 'sent'].sort(),
		);

		const retry = await timed('run', 'retry', () => main.rest('POST', `/rest/executions/${dead.id}/retry`, { cookie, body: { loadWorkflow: false } }));
		expect(retry.status).toBe(200);
		await waitForExecutions(
			main,
			cookie,
			WORKFLOW_ID,
			(list) => own(list).length === 2 && own(list).every((execution) => FINISHED.includes(execution.status)),
			240_000,
		);
		const retried = own(await listExecutions(main, cookie, WORKFLOW_ID)).find((execution) => execution.id !== dead.id)!;
		// How the Retry ended, first: a failure below then says whether it was still running or refused a download.
		const { status, data } = await readExecution(main, cookie, retried.id);
		expect({ status, error: data.resultData.error?.message }).toEqual({ status: 'success', error: undefined });

		const log = await mock.log();
		const submissions = submissionsIn(log);
		// Each prompt POSTed at most once, across the dead run and its Retry.
		const perPrompt = new Map<string, number>();
		for (const entry of submissions) perPrompt.set(promptOf(entry), (perPrompt.get(promptOf(entry)) ?? 0) + 1);
		expect([...perPrompt.values()].filter((count) => count > 1)).toEqual([]);

		expect(submissions).toHaveLength(PROMPTS.length);
		const rows = await ledgerRows(main, cookie, table);
		// The 9th: in flight when the worker died, so never sent again; its row stays as sent (Recover lists it).
		const unknown = rows.filter((row) => sentOrState(rows)(row) === 'sent');
		expect(unknown.map((row) => String(JSON.parse(row.detail).item_index))).toEqual([String(KILL_AFTER)]);
		// Every paid task is the Retry's now (8 adopted, 15 paid by it); the dead run's 15 `planned` rows were never sent.
		expect(rows.filter((row) => row.state === 'accepted' && row.execution_id === retried.id)).toHaveLength(PROMPTS.length - 1);
		expect(rows.filter((row) => row.state === 'accepted' && row.execution_id !== retried.id)).toEqual([]);

		// Every task the service created was delivered with exactly its bytes (a cut, unrecorded one would show here).
		const created = new Set(log.filter((entry) => entry.taskId && submissions.includes(entry)).map((entry) => entry.taskId!));
		const delivered = new Set<string>();
		for (const entry of log.filter((e) => e.path.endsWith('/artifacts/video/content') && e.status === 200 && e.taskId)) {
			if (entry.sha256 === (await mock.artifactSha256(entry.taskId!))) delivered.add(entry.taskId!);
		}
		// Undelivered, each with the answers to its downloads (none: never asked; 410: its link had expired).
		const contentAnswers = (taskId: string) => log.filter((e) => e.taskId === taskId && e.path.endsWith('/content')).map((e) => e.status);
		expect([...created].filter((taskId) => !delivered.has(taskId)).map((taskId) => ({ taskId, contentAnswers: contentAnswers(taskId) }))).toEqual([]);
		expect(created.size).toBe(PROMPTS.length - 1);

		// The retry succeeded (above; the node continues on fail): the dead run's tasks resumed, the rest paid now, and an
		// item whose submission the kill cut is an error item saying why it was not resent.
		const items = data.resultData.runData[GENERATE_NODE][0].data.main[0] as Array<{ json: Record<string, any> }>; // eslint-disable-line @typescript-eslint/no-explicit-any
		expect(items).toHaveLength(PROMPTS.length);
		expect(items.filter((item) => item.json.resumed === true)).toHaveLength(KILL_AFTER);
		expect(items.filter((item) => item.json.status === 'SUCCESS')).toHaveLength(PROMPTS.length - 1);
		expect(JSON.stringify(items[KILL_AFTER].json)).toMatch(/Not resubmitted: an earlier run of this item \(execution \d+\)/);
	
		// Recover afterwards (a workflow of its own, as examples/video-recover-paid-tasks.json): no task is left, and the
		// 9th is on Unknown Outcome with its prompt; a second Recover finds nothing more. The Retry holds its rows (the 9th
		// too, which it claimed) until its hold sees its run saved, within 20 s (issue 51: executionHold.ts).
		await until('the Retry\'s hold lets its rows go', 60_000, async () =>
			(await ledgerRows(main, cookie, table)).every((row) => row.execution_id !== retried.id || Number(row.lease_until) === 0) || undefined,
		);
		const recover = async () =>
			expect(await postWebhook(main.url, RECOVER_PATH, { ledger: table.id, workflow: WORKFLOW_ID })).toBe(200);
		await waitForWebhook(main, RECOVER_PATH);
		await recover();
		const [recovered] = await waitForExecutions(main, cookie, RECOVER_ID, (list) => list.length === 1 && FINISHED.includes(list[0].status), 120_000);
		const outputs = (await readExecution(main, cookie, recovered.id)).data.resultData.runData[RECOVER_NODE][0].data.main;
		expect(outputs[0]).toEqual([]);
		expect(outputs[1].map((item: { json: Record<string, unknown> }) => [item.json.item_index, item.json.recovered])).toEqual([
			[KILL_AFTER, 'unknown_outcome'],
		]);
		expect(outputs[1][0].json.prompt).toBe(PROMPTS[KILL_AFTER]);
		await recover();
		const again = await waitForExecutions(main, cookie, RECOVER_ID, (list) => list.length === 2 && list.every((e) => FINISHED.includes(e.status)), 120_000);
		const second = (await readExecution(main, cookie, again[0].id)).data.resultData.runData[RECOVER_NODE][0].data.main;
		expect([second[0]?.length ?? 0, second[1]?.length ?? 0]).toEqual([0, 0]);
	}, 12 * 60_000);
});
