// Case 2, queue mode: Redis, PostgreSQL, a main and two workers (`n8n worker --concurrency=5`; test/e2e/queue's
// cluster plus a second worker from the same home), E executions × M prompts of the durable wait (Webhook → Split Out
// → Submit Video → Wait → Check Video loop). One worker is SIGKILLed while submissions run, the main is restarted
// once while the executions wait, and the first worker is SIGKILLed while it checks (issue 30). With the task ledger
// (Submit Video's Options → Task Ledger, an n8n Data Table; SCALE_QUEUE_LEDGER=off runs without it), every execution
// that ended `error` or `crashed` is then retried through n8n's REST API as the editor's Retry button does. Every
// prompt should be submitted once (0 duplicates at the mock) and every task created delivered (0 lost task_ids).
import * as fs from 'fs';
import * as path from 'path';

import { freePort, nodeType, type N8nServer } from '../../test/e2e/n8n';
import { startQueueCluster, type QueueCluster, type QueueClusterOptions } from '../../test/e2e/queue/cluster';
import type { PostgresServer } from '../../test/e2e/queue/services';
import { startService, type ServiceProcess } from '../../test/e2e/queue/process';
import type { MockClient } from '../../test/mock/process';
import type { ScaleConfig } from './config';
import { countRequests, setRateLimit, type Log, type RequestCounts } from './common';
import { checkLoopWorkflow, webhookNode } from './durable';
import { chainConnections, workflowOf } from '../workflows';
import { createLedgerTable, ledgerRows } from '../../test/e2e/workflows/ledgerTable';
import { WORK_DIR } from '../setup';
import { sampleWorkerCpu } from './groupCpu';

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
	/** The same by node name (Submit Video, Check Video…): where the worker's time went. */
	nodeSecondsPerTask?: Record<string, number>;
	/** The mock's rate limit (requests per second on the key) for this run. */
	rateLimit?: number;
	/**
	 * CPU seconds (user + system) of the worker processes (n8n worker and its task runner, killed ones up to their
	 * last reading) over the prompts: what a task costs the machine; node run times also count waits on I/O.
	 */
	workerCpuSecondsPerTask?: number;
	wallSeconds: number;
	/** Undefined when nothing was killed (the calm run: the ledger's own cost, no crash to recover from). */
	killedWorkerAtSeconds?: number;
	restartedMainAtSeconds?: number;
	/** The other worker SIGKILLed (and a new one started) while it ran Check: seconds from the start. */
	killedCheckingWorkerAtSeconds?: number;
	/** Submit Video recorded its tasks in a task ledger (Options → Task Ledger). */
	ledger: boolean;
	/** Executions that ended `error` or `crashed` and were retried (REST, as the editor's Retry). */
	retried: number;
	/** Tasks the one Recover run after the retries handed to Wait for Completion. */
	recovered: number;
	/**
	 * Submit Video items that resumed a task in an execution that is not a Retry: n8n 1.x re-ran a killed worker's job
	 * (the same execution id) and the ledger gave back the tasks that run had paid for.
	 */
	resumedInRerun: number;
	/**
	 * Jobs a worker started more than once (the same execution and the same job id, from the workers' logs): n8n 1.x
	 * re-ran a stalled job. A resume after a Wait is a new job of the same execution, not counted.
	 */
	jobsRerun?: number;
	/** Ledger rows by state at the end (ledger on): `sending` rows are submissions with an unknown outcome. */
	ledgerStates: Record<string, number>;
	/** Executions n8n created in all, the ledger's sub-workflow runs included (PostgreSQL's execution id sequence). */
	executionsCreated: number;
	/**
	 * The ledger's sub-workflow runs still in the database (mode `integrated`) by the Data Table operation they ran, their
	 * status and whether n8n deleted them (`op:status:kept|deleted`): where the runs per task went.
	 */
	subRuns?: Record<string, number>;
	/** PostgreSQL transactions committed during the run (pg_stat_database.xact_commit), all of n8n's. */
	databaseCommits: number;
	n8nVersion: string;
	/** The environment added to the main and both workers (n8n 1.x: QUEUE_WORKER_MAX_STALLED_COUNT=0). */
	env: Record<string, string>;
}

/** Split Out of the webhook's `body.prompts`: one item per prompt, the prompt in PROMPT_OF_ITEM. */
export const SPLIT_PROMPTS = { name: 'One Item per Prompt', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'body.prompts', options: {} } };
export const PROMPT_OF_ITEM = '={{ $json["body.prompts"] ?? $json.prompt }}';

function queueWorkflow(credential: { id: string; name: string }, waitSeconds: number, ledger: boolean): Record<string, unknown> {
	return checkLoopWorkflow('Scale: queue mode durable batch', [webhookNode(WEBHOOK_PATH), SPLIT_PROMPTS], {
		prompt: PROMPT_OF_ITEM,
		waitSeconds,
		credential,
		...(ledger ? { submitOptions: { taskLedger: "={{ $('Webhook').first().json.body.ledger }}" } } : {}),
	});
}

const RECOVER_PATH = 'scale-queue-recover';

/** After the retries, what the docs tell a user to do once: Recover → Wait for Completion (downloads each video). */
function recoverWorkflow(credential: { id: string; name: string }): Record<string, unknown> {
	const credentials = { genGatewayApi: credential };
	const nodes = [
		webhookNode(RECOVER_PATH),
		{
			name: 'Recover',
			type: nodeType('genGatewayVideo'),
			typeVersion: 1,
			parameters: { operation: 'recover', taskLedger: '={{ $json.body.ledger }}', workflowId: '={{ $json.body.workflow }}' },
			credentials,
		},
		{
			name: 'Wait for Completion',
			type: nodeType('genGatewayVideo'),
			typeVersion: 1,
			parameters: { operation: 'waitForCompletion', taskId: '={{ $json.task_id }}', options: { pollInterval: 5 } },
			credentials,
		},
	];
	return workflowOf('Scale: Recover after the crash', nodes, chainConnections(nodes));
}

export const FINISHED = ['success', 'error', 'crashed', 'canceled'];

/** The ledger's sub-workflow runs by operation, status and kept/deleted (QueueRun.subRuns); undefined if unreadable. */
async function subRunsByKind(postgres: PostgresServer): Promise<Record<string, number> | undefined> {
	const op = `coalesce(d."workflowData"::json->'nodes'->1->'parameters'->>'operation', '?')`;
	const kind = `${op} || ':' || e.status || ':' || (case when e."deletedAt" is null then 'kept' else 'deleted' end)`;
	try {
		const rows = await postgres.query(
			`select ${kind}, count(*) from execution_entity e left join execution_data d on d."executionId" = e.id where e.mode = 'integrated' group by 1 order by 1`,
		);
		return Object.fromEntries(rows.split('\n').filter(Boolean).map((line) => line.split('|')).map(([key, count]) => [key, Number(count)]));
	} catch {
		return undefined;
	}
}

/** Whether SCALE_QUEUE_LEDGER asks for the ledger (default on). */
export function queueLedger(env: NodeJS.ProcessEnv = process.env): boolean {
	const value = env.SCALE_QUEUE_LEDGER ?? 'on';
	if (!['on', 'off', 'both'].includes(value)) throw new Error(`SCALE_QUEUE_LEDGER: on, off or both, not ${value}`);
	return value !== 'off';
}

/**
 * SCALE_QUEUE_ENV: n8n settings for the main and the workers of case 2 (`KEY=value,KEY=value`), e.g.
 * DB_POSTGRESDB_POOL_SIZE=10; the rows' details name them.
 */
export function queueEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
	const pairs = (env.SCALE_QUEUE_ENV ?? '').split(',').map((pair) => pair.trim()).filter(Boolean);
	return Object.fromEntries(
		pairs.map((pair) => {
			const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
			if (!match) throw new Error(`SCALE_QUEUE_ENV: KEY=value pairs separated by commas, not ${pair}`);
			return [match[1], match[2]];
		}),
	);
}

/**
 * The workflow's executions, read in PostgreSQL (n8n's REST list pages at most 100 at a time, by cursor). Not the
 * task ledger's sub-workflow runs (mode `integrated`, the workflow's id), nor what n8n deleted.
 */
export async function executionsOf(postgres: PostgresServer, workflowId: string): Promise<Array<{ id: string; status: string }>> {
	const rows = await postgres.query(
		`select id, status from execution_entity where "workflowId" = '${workflowId}' and mode <> 'integrated' and "deletedAt" is null order by id`,
	);
	return rows.split('\n').filter(Boolean).map((line) => {
		const [id, status] = line.split('|');
		return { id, status };
	});
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * test/e2e/queue's cluster (Redis, PostgreSQL, a main, a worker from its own home) and a second `n8n worker` from the
 * worker's home, both with `--concurrency=<concurrency>`, on the mock's URL and key (one credential). The caller stops
 * `second` before `cluster.stop()`.
 */
export async function startTwoWorkers(
	mock: MockClient,
	concurrency: number,
	options: Pick<QueueClusterOptions, 'env' | 'extraWorkflows'>,
): Promise<{ cluster: QueueCluster; second: ServiceProcess }> {
	const cluster = await startQueueCluster({ baseUrl: mock.url, apiKey: mock.apiKey, workerConcurrency: concurrency, ...options });
	try {
		const home = cluster.workerHome;
		const env = home.env({
			QUEUE_HEALTH_CHECK_ACTIVE: 'true',
			QUEUE_HEALTH_CHECK_PORT: String(await freePort()),
			N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
			N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		});
		const second = startService(home.install.n8nBin, ['worker', `--concurrency=${concurrency}`], { cwd: home.dir, env });
		await second.waitForOutput(/n8n worker is now ready|Worker ready|ready to process/i, 180_000).catch(() => sleep(15_000));
		return { cluster, second };
	} catch (error) {
		await cluster.stop();
		throw error;
	}
}

/**
 * `env` goes to the main and both workers. On n8n 1.x the bench passes QUEUE_WORKER_MAX_STALLED_COUNT=0: 1.x's
 * default (1) re-runs a killed worker's job from its last saved state, a paid submission included; 2.x has no such
 * setting and never re-runs a stalled job.
 */
export async function runQueue(
	config: ScaleConfig,
	mock: MockClient,
	log: Log,
	env: Record<string, string> = {},
	ledger = queueLedger(),
	crash = true,
	rateLimit = config.queue.rateLimit,
): Promise<QueueRun> {
	const { executions, itemsPerExecution, taskSeconds, concurrency } = config.queue;
	env = { ...queueEnv(), ...env };
	let workflowId = '';
	let recoverId = '';
	const { cluster, second } = await startTwoWorkers(mock, concurrency, {
		// The leader marks executions whose job died `crashed` every minute (default 180), so they can be retried.
		env: { N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '1', ...env },
		extraWorkflows: (credential) => {
			const workflow = queueWorkflow(credential, 70, ledger);
			workflowId = String(workflow.id);
			const recover = recoverWorkflow(credential);
			recoverId = String(recover.id);
			return [workflow, recover];
		},
	});
	let main = cluster.main;
	let restarted: N8nServer | undefined;
	try {
		await mock.reset();
		await setRateLimit(mock, rateLimit);
		let cookie = await main.ownerSession();
		const table = ledger ? await createLedgerTable(main, cookie, 'Scale task ledger') : undefined;
		const sequence = async () => Number(await cluster.postgres.query('select last_value from execution_entity_id_seq'));
		const commits = async () => Number(await cluster.postgres.query('select xact_commit from pg_stat_database where datname = current_database()'));
		const [firstSequence, firstCommits] = [await sequence(), await commits()];
		const started = Date.now();
		const cpu = sampleWorkerCpu(() => [cluster.worker.child.pid, second.child.pid].filter((pid): pid is number => pid !== undefined));
		log(`  queue (n8n ${cluster.mainHome.install.version}${Object.keys(env).length ? `, ${JSON.stringify(env)}` : ''}, ledger ${ledger ? 'on' : 'off'}${crash ? '' : ', nothing killed'}): ${executions} executions × ${itemsPerExecution} prompts × ${taskSeconds} s at ${rateLimit} req/s, 2 workers × ${concurrency} …`);
		for (let e = 0; e < executions; e++) {
			const prompts = Array.from({ length: itemsPerExecution }, (_, i) => `Queue ${e + 1}.${i + 1} [[queuedMs=0]] [[runMs=${taskSeconds * 1000}]] [[ttlMs=3600000]]`);
			const answer = await fetch(`${main.url}/webhook/${WEBHOOK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompts, ledger: table?.id }) });
			if (answer.status !== 200) throw new Error(`bench:scale: queue webhook answered ${answer.status}`);
		}
		let killedAt: number | undefined;
		let restartedAt: number | undefined;
		let checkKilledAt: number | undefined;
		if (crash) {
			await sleep(Math.max(0, 20_000 - (Date.now() - started)));
			killedAt = (Date.now() - started) / 1000;
			log(`  queue: SIGKILL worker 2 at ${killedAt.toFixed(0)} s`);
			await second.stop('SIGKILL', 0);
			await sleep(Math.max(0, 60_000 - (Date.now() - started)));
			restartedAt = (Date.now() - started) / 1000;
			log(`  queue: restarting the main at ${restartedAt.toFixed(0)} s`);
			await main.stop();
			restarted = await cluster.mainHome.startServer({ readyTimeoutMs: 180_000 });
			main = restarted;
			cookie = await main.ownerSession();
			// Mid-check: the first status checks come a Wait (70 s) after the first submissions.
			await sleep(Math.max(0, 100_000 - (Date.now() - started)));
			checkKilledAt = (Date.now() - started) / 1000;
			log(`  queue: SIGKILL worker 1 while it checks, at ${checkKilledAt.toFixed(0)} s (a new one starts)`);
			await cluster.restartWorker();
		}
		// Done when every execution has ended, or when none waits any more and the mock has seen nothing for 90 s (an
		// execution whose worker was killed stays `running` or `new` in the database until n8n's leader marks it).
		const settle = async (expected: number): Promise<Array<{ id: string; status: string }>> => {
			let list: Array<{ id: string; status: string }> = [];
			const deadline = Date.now() + 25 * 60_000;
			let seen = -1;
			let quietSince = Date.now();
			while (Date.now() < deadline) {
				list = await executionsOf(cluster.postgres, workflowId);
				if (list.length >= expected && list.every((entry) => FINISHED.includes(entry.status))) break;
				const requests = (await mock.log()).length;
				if (requests !== seen) {
					seen = requests;
					quietSince = Date.now();
				}
				// A `new` execution whose job the killed worker had taken never starts: only `waiting` ones still count.
				const pending = list.some((entry) => entry.status === 'waiting');
				if (!pending && list.length >= expected && Date.now() - quietSince > 150_000) break;
				await sleep(3000);
			}
			return list;
		};
		let list = await settle(executions);
		// What a user does after a crash: Retry each failed or crashed execution (the retries run at once).
		const failed = list.filter((entry) => entry.status === 'error' || entry.status === 'crashed');
		if (ledger && failed.length > 0) {
			log(`  queue: retrying ${failed.length} executions (${JSON.stringify(failed.map((entry) => entry.status))})`);
			// The answer comes when the retried execution ends (or goes waiting); a long one outlasts fetch's own timeout,
			// which says nothing about the retry: settle() below reads the executions from the database either way.
			await Promise.all(
				failed.map((entry) =>
					main.rest('POST', `/rest/executions/${entry.id}/retry`, { cookie, body: { loadWorkflow: false } }).catch((error: unknown) => {
						log(`  queue: the retry of ${entry.id} did not answer (${(error as Error).message}); its execution is read from the database`);
					}),
				),
			);
			list = await settle(executions + failed.length);
		}
		// Then Recover once for the whole workflow: the tasks no run handed on, waited for and downloaded.
		let recovered = 0;
		if (ledger) {
			const answer = await fetch(`${main.url}/webhook/${RECOVER_PATH}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ ledger: table?.id, workflow: workflowId }),
			});
			if (answer.status !== 200) throw new Error(`bench:scale: the Recover webhook answered ${answer.status}`);
			const deadline = Date.now() + 20 * 60_000;
			let runs: Array<{ id: string; status: string }> = [];
			while (Date.now() < deadline) {
				runs = await executionsOf(cluster.postgres, recoverId);
				if (runs.length === 1 && FINISHED.includes(runs[0].status)) break;
				await sleep(3000);
			}
			const data = (await main.rest('GET', `/rest/executions/${runs[0]?.id}`, { cookie })).body?.data;
			const { unflatten } = await import('../../test/e2e/workflows/executions');
			const runData = data ? unflatten(data.data).resultData.runData : {};
			recovered = runData.Recover?.[0]?.data?.main?.[0]?.length ?? 0;
			log(`  queue: Recover ${runs[0]?.status}: ${recovered} tasks, ${runData.Recover?.[0]?.data?.main?.[1]?.length ?? 0} unknown outcomes`);
		}
		const wallSeconds = (Date.now() - started) / 1000;
		const starts = [cluster.workerOutput(), second.output()]
			.join('\n')
			.matchAll(/Worker started execution (\d+) \(job (\d+)\)/g);
		const jobStarts = new Map<string, number>();
		for (const [, execution, job] of starts) jobStarts.set(`${execution}/${job}`, (jobStarts.get(`${execution}/${job}`) ?? 0) + 1);
		const jobsRerun = [...jobStarts.values()].filter((count) => count > 1).length;
		const workerCpuSeconds = cpu.stop();
		const statuses: Record<string, number> = {};
		for (const entry of list) statuses[entry.status] = (statuses[entry.status] ?? 0) + 1;
		const ledgerStates: Record<string, number> = {};
		for (const row of table ? await ledgerRows(main, cookie, table) : []) ledgerStates[row.state] = (ledgerStates[row.state] ?? 0) + 1;
		const [lastSequence, lastCommits] = [await sequence(), await commits()];
		const subRuns = await subRunsByKind(cluster.postgres);
		let nodeMs = 0;
		const msByNode: Record<string, number> = {};
		let resumedInRerun = 0;
		const diagnosis: Array<Record<string, unknown>> = [];
		for (const entry of list) {
			const response = await main.rest('GET', `/rest/executions/${entry.id}`, { cookie });
			const { unflatten } = await import('../../test/e2e/workflows/executions');
			const data = unflatten(response.body.data.data);
			const submitRuns = (data.resultData.runData?.['Submit Video'] ?? []) as Array<{ error?: { message?: string }; data?: { main?: Array<Array<{ json?: Record<string, unknown> }>> } }>;
			diagnosis.push({
				id: entry.id,
				status: entry.status,
				mode: response.body.data.mode,
				retryOf: response.body.data.retryOf,
				lastNode: data.resultData.lastNodeExecuted,
				error: data.resultData.error?.message,
				submitRuns: submitRuns.map((run) => ({
					error: run.error?.message,
					items: (run.data?.main?.[0] ?? []).map((item) => [item.json?.task_id, item.json?.resumed, item.json?.error]),
				})),
			});
			for (const [node, runs] of Object.entries(data.resultData.runData ?? {}) as Array<[string, Array<{ executionTime: number }>]>) {
				for (const run of runs) {
					nodeMs += run.executionTime ?? 0;
					msByNode[node] = (msByNode[node] ?? 0) + (run.executionTime ?? 0);
				}
			}
			if (response.body.data.mode === 'retry') continue;
			const submitted = data.resultData.runData?.['Submit Video']?.[0]?.data?.main?.[0] ?? [];
			resumedInRerun += submitted.filter((item: { json?: { resumed?: boolean } }) => item.json?.resumed === true).length;
		}
		const mockLog = await mock.log();
		// What a failed check needs to trace a task: the mock's log, the ledger's rows, each execution's Submit Video runs.
		fs.mkdirSync(WORK_DIR, { recursive: true });
		fs.writeFileSync(
			path.join(WORK_DIR, `queue${crash ? '' : '.calm'}.${ledger ? 'on' : 'off'}.diagnosis.json`),
			JSON.stringify({ executions: diagnosis, ledgerRows: table ? await ledgerRows(main, cookie, table) : [], log: mockLog }),
		);
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
			nodeSecondsPerTask: Object.fromEntries(Object.entries(msByNode).map(([node, ms]) => [node, ms / 1000 / (executions * itemsPerExecution)])),
			rateLimit,
			workerCpuSecondsPerTask: workerCpuSeconds / (executions * itemsPerExecution),
			wallSeconds,
			killedWorkerAtSeconds: killedAt,
			restartedMainAtSeconds: restartedAt,
			killedCheckingWorkerAtSeconds: checkKilledAt,
			ledger,
			retried: ledger ? failed.length : 0,
			recovered,
			resumedInRerun,
			jobsRerun,
			ledgerStates,
			executionsCreated: lastSequence - firstSequence,
			subRuns,
			databaseCommits: lastCommits - firstCommits,
			n8nVersion: cluster.mainHome.install.version,
			env,
		};
		log(
			`  queue: ${JSON.stringify(statuses)} in ${wallSeconds.toFixed(0)} s; ${run.exact}/${run.prompts} exact; ${run.counts.submissions} tasks created, ` +
				`${run.counts.duplicatePrompts} prompts twice, ${run.lostTaskIds} lost; ${run.counts.limited}/${run.counts.requests} answered 429; ` +
				`ledger ${JSON.stringify(ledgerStates)}, ${jobsRerun} jobs re-run, ${resumedInRerun} resumed in a re-run job, ` +
				`${run.executionsCreated} executions created, ${run.databaseCommits} commits; sub-workflow runs ${JSON.stringify(subRuns)}`,
		);
		return run;
	} finally {
		await second.stop('SIGKILL', 0);
		await restarted?.stop();
		await cluster.stop();
	}
}
