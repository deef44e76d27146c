// The durable wait in n8n's queue mode (a main and ONE worker slot: `n8n worker --concurrency=1`, Redis, PostgreSQL;
// see queue/cluster.ts): while a video task of 150 s waits as Generate → Wait 70 s → Check, the execution is stored as
// `waiting` and holds no worker, so the single slot runs another workflow meanwhile. With an in-process wait the slot
// would be taken for the whole task. Meanwhile the worker is SIGKILLed (as an OOM kill or a lost machine would) and a
// new one started: the parked execution resumes on it; 0 duplicate submissions, 0 lost task_ids (issue 22).
// Time: about 240 s (237 s measured with the worker restart, which falls within the idle wait), about 210 s of it
// idle: the 150 s task behind a durable wait and the wait tracker's once-a-minute resume; the set-up starts Redis,
// PostgreSQL, a main and a worker. Started first, beside other files.
import { spawnMockProcess, type MockClient } from '../mock/process';
import { durableWebhookWorkflow } from './workflows/durableWorkflow';
import { listExecutions, readExecution, waitForExecutions, waitForWebhook } from './workflows/executions';
import { SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import { FRESH_CONNECTION, randomId } from './n8n';
import { describeRestart, executionsToRecover, watchStartupRecovery } from './support/eventLog';
import { startQueueCluster, type QueueCluster } from './queue/cluster';

const DURABLE_PATH = 'durable-queue';
const DURABLE_ID = 'ggDurableQueue01';
const LONG_PROMPT = 'A glacier calving into the sea [[queuedMs=0]] [[runMs=150000]] [[ttlMs=900000]]';

describe('durable wait in queue mode: one worker slot, free while the video task waits', () => {
	const apiKey = `sk-e2e-durable-queue-${randomId(24)}`;
	let mock: MockClient;
	let cluster: QueueCluster;

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey, defaults: { queuedMs: 100, runMs: 1500 } });
		cluster = await startQueueCluster({
			baseUrl: mock.url,
			apiKey,
			workerConcurrency: 1,
			extraWorkflows: (credential) => [durableWebhookWorkflow({ id: DURABLE_ID, webhookPath: DURABLE_PATH, credential })],
		});
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await cluster?.stop();
		await mock?.stop();
	});

	it(
		'the single slot runs another video workflow while the long task waits; the long task then ends with its mp4',
		async () => {
			const { main } = cluster;
			const cookie = await main.ownerSession();
			await waitForWebhook(main, DURABLE_PATH);
			const started = await fetch(`${main.url}/webhook/${DURABLE_PATH}`, {
				method: 'POST',
				headers: { ...FRESH_CONNECTION, 'content-type': 'application/json' },
				body: JSON.stringify({ prompt: LONG_PROMPT }),
			});
			expect(started.status).toBe(200);
			const [parked] = await waitForExecutions(
				main,
				cookie,
				DURABLE_ID,
				(executions) => executions.length === 1 && executions[0].status === 'waiting',
				120_000,
			);

			// Meanwhile, the other workflow (webhook → Generate with an in-process wait → its mp4) on the only slot.
			const answer = await cluster.callWebhook({ prompt: 'a quick fox [[size=300k]]' });
			const answeredAt = Date.now();
			expect(answer.status).toBe(200);
			expect(answer.contentType).toMatch(/^video\/mp4/);

			// The worker dies mid-run (SIGKILL) while the long execution is parked between checks; a new worker starts.
			// The new worker's start-up crash recovery rewrites the parked execution (its event log, n8nEventLog-worker.log,
			// holds the execution's node events and no end event); were its Wait to end during that start, n8n's resume
			// could meet that rewrite and leave it crashed (support/eventLog.ts). The test prints how the restart fell
			// against the Wait, and names that race if the execution ends crashed.
			const parkedNow = await waitForExecutions(
				main,
				cookie,
				DURABLE_ID,
				(executions) => executions.length === 1 && executions[0].status === 'waiting',
				120_000,
			);
			const toRecover = executionsToRecover(cluster.workerHome.n8nFolder, 'worker');
			const recovered = watchStartupRecovery(() => cluster.workerHome.logs(), 120_000);
			const killedAt = Date.now();
			await cluster.restartWorker();

			const [finished] = await waitForExecutions(
				main,
				cookie,
				DURABLE_ID,
				(executions) => executions.length === 1 && ['success', 'error', 'crashed', 'canceled'].includes(executions[0].status),
				8 * 60_000,
			);
			expect(finished.id).toBe(parked.id);
			const restart = describeRestart(toRecover.length > 0 ? await recovered : undefined, parkedNow, killedAt);
			process.stderr.write(`queue.durable.e2e: worker event log at the kill: ${toRecover.join(', ') || 'nothing'} unfinished; ${restart}\n`);
			if (finished.status === 'crashed') throw new Error(`execution ${finished.id} ended crashed; ${restart}`);
			const { data } = await readExecution(main, cookie, finished.id);
			expect({ status: finished.status, error: data.resultData.error?.message }).toEqual({ status: 'success', error: undefined });

			const log = await mock.log();
			const [submission] = submissionsIn(log).filter((entry) => (entry.body as { prompt?: string }).prompt === LONG_PROMPT);
			const taskId = submission.taskId!;
			expect(submissionsIn(log).filter((entry) => entry.taskId === taskId)).toHaveLength(1);
			const checkRuns = data.resultData.runData['Check Video'] as Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }> | null> } }>;
			expect(checkRuns.length).toBeGreaterThanOrEqual(2);
			const [done] = checkRuns[checkRuns.length - 1].data.main[0] ?? [];
			expect(done.json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			// The mp4 was fetched (into the database's binary data) byte for byte as the mock served it.
			const content = log.filter((entry) => entry.path === `/v1/tasks/${taskId}/artifacts/video/content` && entry.status === 200);
			expect(content).toHaveLength(1);
			expect(content[0].sha256).toBe(await mock.artifactSha256(taskId));
			// The other workflow was answered while the long task was still running: the slot was free.
			expect(answeredAt).toBeLessThan(Date.parse(content[0].time));
			expect(sha256(answer.body)).toBe(
				log.find((entry) => entry.path.endsWith('/artifacts/video/content') && entry.taskId !== taskId && entry.status === 200)!.sha256,
			);

			// Worker time the Gen Gateway nodes of the durable execution took: seconds, against a task of 150 s.
			let heldMs = 0;
			for (const node of ['Submit Video', 'Check Video']) {
				for (const run of data.resultData.runData[node] as Array<{ executionTime: number }>) heldMs += run.executionTime;
			}
			process.stderr.write(`durable execution ${finished.id}: node run time ${heldMs} ms over ${checkRuns.length} checks\n`);
			expect(heldMs).toBeLessThan(60_000);
			// Every resume was a new job of the one worker (the main only enqueues).
			expect(cluster.startedByWorker().filter((id) => id === finished.id).length).toBeGreaterThanOrEqual(2);
			expect((await listExecutions(main, cookie, DURABLE_ID)).map((execution) => execution.status)).toEqual(['success']);
			// Across the killed worker: every task the service created was submitted once (one per prompt) and delivered.
			const created = submissionsIn(log).filter((entry) => entry.status === 200 && entry.taskId);
			expect(created.length).toBe(2);
			expect(await mock.submissions()).toBe(created.length);
			expect(new Set(created.map((entry) => (entry.body as { prompt?: string }).prompt)).size).toBe(created.length);
			for (const { taskId: id } of created) {
				const delivered = log.filter((entry) => entry.path === `/v1/tasks/${id}/artifacts/video/content` && entry.status === 200);
				expect({ id, delivered: delivered.length }).toEqual({ id, delivered: 1 });
			}
			// The checks after the kill ran on the new worker.
			expect(cluster.worker.output()).toMatch(new RegExp(`Worker started execution ${finished.id} \\(job`));
		},
		12 * 60_000,
	);
});
