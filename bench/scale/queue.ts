// Case 2, queue mode: Redis, PostgreSQL, a main and two workers (`n8n worker --concurrency=5`; test/e2e/queue's
// cluster plus a second worker from the same home), E executions × M prompts of the durable wait (Webhook → Split Out
// → Submit Video → Wait → Check Video loop). One worker is SIGKILLed while submissions run, the main is restarted
// once while the executions wait. Every prompt should be submitted once (0 duplicates at the mock) and every task
// created delivered (0 lost task_ids).
import { freePort, type N8nServer } from '../../test/e2e/n8n';
import { startQueueCluster } from '../../test/e2e/queue/cluster';
import { startService, type ServiceProcess } from '../../test/e2e/queue/process';
import type { MockClient } from '../../test/mock/process';
import type { ScaleConfig } from './config';
import { countRequests, setRateLimit, type Log, type RequestCounts } from './common';
import { checkLoopWorkflow, webhookNode } from './durable';

const WEBHOOK_PATH = 'scale-queue-durable';

export interface QueueRun {
	executions: number;
	prompts: number;
	statuses: Record<string, number>;
	counts: RequestCounts;
	/** Tasks created that no content request fetched whole. */
	lostTaskIds: number;
	/** Tasks whose content was served with exactly the task's bytes. */
	exact: number;
	/** Sum of node run times of all executions (s) over the prompts: worker time per task. */
	workerSecondsPerTask: number;
	wallSeconds: number;
	killedWorkerAtSeconds: number;
	restartedMainAtSeconds: number;
	n8nVersion: string;
	/** The environment added to the main and both workers (n8n 1.x: QUEUE_WORKER_MAX_STALLED_COUNT=0). */
	env: Record<string, string>;
}

function queueWorkflow(credential: { id: string; name: string }, waitSeconds: number): Record<string, unknown> {
	const split = { name: 'One Item per Prompt', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'body.prompts', options: {} } };
	return checkLoopWorkflow('Scale: queue mode durable batch', [webhookNode(WEBHOOK_PATH), split], {
		prompt: '={{ $json["body.prompts"] ?? $json.prompt }}',
		waitSeconds,
		credential,
	});
}

async function executionsOf(server: N8nServer, cookie: string, workflowId: string): Promise<Array<{ id: string; status: string }>> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const response = await server.rest('GET', `/rest/executions?filter=${filter}&limit=100`, { cookie });
	return (response.body?.data?.results ?? []).map((entry: { id: string; status: string }) => ({ id: String(entry.id), status: entry.status }));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `env` goes to the main and both workers. On n8n 1.x the bench passes QUEUE_WORKER_MAX_STALLED_COUNT=0: 1.x's
 * default (1) re-runs a killed worker's job from its last saved state, a paid submission included; 2.x has no such
 * setting and never re-runs a stalled job.
 */
export async function runQueue(config: ScaleConfig, mock: MockClient, log: Log, env: Record<string, string> = {}): Promise<QueueRun> {
	const { executions, itemsPerExecution, taskSeconds, rateLimit, concurrency } = config.queue;
	let workflowId = '';
	const cluster = await startQueueCluster({
		baseUrl: mock.url,
		apiKey: mock.apiKey,
		workerConcurrency: concurrency,
		env,
		extraWorkflows: (credential) => {
			const workflow = queueWorkflow(credential, 70);
			workflowId = String(workflow.id);
			return [workflow];
		},
	});
	let second: ServiceProcess | undefined;
	let main = cluster.main;
	let restarted: N8nServer | undefined;
	try {
		const home = cluster.workerHome;
		const secondEnv = home.env({
			QUEUE_HEALTH_CHECK_ACTIVE: 'true',
			QUEUE_HEALTH_CHECK_PORT: String(await freePort()),
			N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
			N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		});
		second = startService(home.install.n8nBin, ['worker', `--concurrency=${concurrency}`], { cwd: home.dir, env: secondEnv });
		await second.waitForOutput(/n8n worker is now ready|Worker ready|ready to process/i, 180_000).catch(() => sleep(15_000));
		await mock.reset();
		await setRateLimit(mock, rateLimit);
		let cookie = await main.ownerSession();
		const started = Date.now();
		log(`  queue (n8n ${cluster.mainHome.install.version}${Object.keys(env).length ? `, ${JSON.stringify(env)}` : ''}): ${executions} executions × ${itemsPerExecution} prompts × ${taskSeconds} s at ${rateLimit} req/s, 2 workers × ${concurrency} …`);
		for (let e = 0; e < executions; e++) {
			const prompts = Array.from({ length: itemsPerExecution }, (_, i) => `Queue ${e + 1}.${i + 1} [[queuedMs=0]] [[runMs=${taskSeconds * 1000}]] [[ttlMs=3600000]]`);
			const answer = await fetch(`${main.url}/webhook/${WEBHOOK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompts }) });
			if (answer.status !== 200) throw new Error(`bench:scale: queue webhook answered ${answer.status}`);
		}
		await sleep(Math.max(0, 20_000 - (Date.now() - started)));
		const killedAt = (Date.now() - started) / 1000;
		log(`  queue: SIGKILL worker 2 at ${killedAt.toFixed(0)} s`);
		await second.stop('SIGKILL', 0);
		await sleep(Math.max(0, 60_000 - (Date.now() - started)));
		const restartedAt = (Date.now() - started) / 1000;
		log(`  queue: restarting the main at ${restartedAt.toFixed(0)} s`);
		await main.stop();
		restarted = await cluster.mainHome.startServer({ readyTimeoutMs: 180_000 });
		main = restarted;
		cookie = await main.ownerSession();
		// Done when every execution has ended, or when none waits any more and the mock has seen nothing for 90 s (an
		// execution whose worker was killed stays `running` or `new` in the database for ever: counted as such).
		let list: Array<{ id: string; status: string }> = [];
		const deadline = Date.now() + 25 * 60_000;
		let seen = -1;
		let quietSince = Date.now();
		while (Date.now() < deadline) {
			list = await executionsOf(main, cookie, workflowId);
			if (list.length >= executions && list.every((entry) => ['success', 'error', 'crashed', 'canceled'].includes(entry.status))) break;
			const requests = (await mock.log()).length;
			if (requests !== seen) {
				seen = requests;
				quietSince = Date.now();
			}
			// A `new` execution whose job the killed worker had taken never starts: only `waiting` ones still count.
			const pending = list.some((entry) => entry.status === 'waiting');
			if (!pending && list.length >= executions && Date.now() - quietSince > 90_000) break;
			await sleep(3000);
		}
		const wallSeconds = (Date.now() - started) / 1000;
		const statuses: Record<string, number> = {};
		for (const entry of list) statuses[entry.status] = (statuses[entry.status] ?? 0) + 1;
		let nodeMs = 0;
		for (const entry of list) {
			const response = await main.rest('GET', `/rest/executions/${entry.id}`, { cookie });
			const { unflatten } = await import('../../test/e2e/workflows/executions');
			const data = unflatten(response.body.data.data);
			for (const runs of Object.values(data.resultData.runData ?? {}) as Array<Array<{ executionTime: number }>>) {
				for (const run of runs) nodeMs += run.executionTime ?? 0;
			}
		}
		const mockLog = await mock.log();
		const created = new Set(mockLog.filter((entry) => entry.method === 'POST' && entry.taskId).map((entry) => entry.taskId!));
		const served = mockLog.filter((entry) => entry.path.endsWith('/artifacts/video/content') && entry.status === 200 && entry.taskId);
		const exactTasks = new Set<string>();
		for (const entry of served) if (entry.sha256 === (await mock.artifactSha256(entry.taskId!))) exactTasks.add(entry.taskId!);
		const run: QueueRun = {
			executions,
			prompts: executions * itemsPerExecution,
			statuses,
			counts: countRequests(mockLog),
			lostTaskIds: [...created].filter((taskId) => !exactTasks.has(taskId)).length,
			exact: exactTasks.size,
			workerSecondsPerTask: nodeMs / 1000 / (executions * itemsPerExecution),
			wallSeconds,
			killedWorkerAtSeconds: killedAt,
			restartedMainAtSeconds: restartedAt,
			n8nVersion: cluster.mainHome.install.version,
			env,
		};
		log(
			`  queue: ${JSON.stringify(statuses)} in ${wallSeconds.toFixed(0)} s; ${run.exact}/${run.prompts} exact; ${run.counts.submissions} tasks created, ` +
				`${run.counts.duplicatePrompts} prompts twice, ${run.lostTaskIds} lost; ${run.counts.limited}/${run.counts.requests} answered 429`,
		);
		return run;
	} finally {
		await second?.stop('SIGKILL', 0);
		await restarted?.stop();
		await cluster.stop();
	}
}
