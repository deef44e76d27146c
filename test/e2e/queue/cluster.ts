// n8n in queue mode on loopback: Redis + PostgreSQL (./services), one `n8n start` (main: editor, REST, production
// webhooks; enqueues executions) and one `n8n worker` (runs them), each with its OWN n8n home, sharing only the
// database, Redis and the encryption key, as on two machines. Binary data goes to the database (see
// docs/queue-mode.md for why).
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { timed } from '../../timing/phases';
import { createN8nHome, freePort, FRESH_CONNECTION, randomId, type CredentialImport, type N8nHome, type N8nServer } from '../n8n';
import { startService, tail, type ServiceProcess } from './process';
import { ensureQueueServices, startPostgres, startRedis, type PostgresServer, type RedisServer } from './services';
import { videoWebhookWorkflow, WEBHOOK_PATH } from './workflow';

export interface QueueClusterOptions {
	/** The Gen Gateway service (the mock) the imported credential points at. */
	baseUrl: string;
	apiKey: string;
	/** How long to wait for each process to be ready (default 3 min: two busy cores). */
	readyTimeoutMs?: number;
	/**
	 * n8n's N8N_DEFAULT_BINARY_DATA_MODE for both processes. Default `database`, the one that works here; the others
	 * are for showing why (docs/queue-mode.md).
	 */
	binaryDataMode?: 'database' | 'filesystem' | 'default';
	/** The worker's `--concurrency` (how many executions it runs at once); n8n's default (10) when not given. */
	workerConcurrency?: number;
	/** More workflows to import and activate (they name the cluster's credential given here). */
	extraWorkflows?: (credential: { id: string; name: string }) => Array<Record<string, unknown>>;
	/**
	 * More environment for the main and every worker, over the queue's (e.g. `QUEUE_WORKER_MAX_STALLED_COUNT: '0'` on
	 * n8n 1.x; the homes drop every inherited N8N_, QUEUE_, DB_ variable, so this is the only way in). None by default.
	 */
	env?: Record<string, string>;
}

export interface WebhookAnswer {
	status: number;
	contentType: string | null;
	body: Buffer;
}

export interface QueueCluster {
	redis: RedisServer;
	postgres: PostgresServer;
	mainHome: N8nHome;
	workerHome: N8nHome;
	main: N8nServer;
	/** The running worker (a new one after `restartWorker`). */
	readonly worker: ServiceProcess;
	/** SIGKILLs the worker's process group (as an OOM kill or a lost machine would), then starts a new one. */
	restartWorker(): Promise<void>;
	workflowId: string;
	/** The production webhook URL on the main process. */
	webhookUrl: string;
	/** POSTs JSON to the production webhook and reads the whole answer. */
	callWebhook(body: unknown, timeoutMs?: number): Promise<WebhookAnswer>;
	/** Execution ids the main enqueued and the worker started, from their logs. */
	enqueuedByMain(): string[];
	/** Across every worker this cluster ran (one entry per start, a resumed execution again). */
	startedByWorker(): string[];
	/** What every worker this cluster ran printed, in start order. */
	workerOutput(): string;
	/** Files under a home's filesystem binary-data folders (filesystem mode would put the mp4s there). */
	binaryFilesOnDisk(home: N8nHome): string[];
	stop(): Promise<void>;
}

/** The environment both n8n processes share: the queue, the database, binary data in the database, one key. */
function queueEnv(
	redis: RedisServer,
	postgres: PostgresServer,
	encryptionKey: string,
	binaryDataMode: string,
): Record<string, string> {
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redis.host,
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: postgres.host,
		DB_POSTGRESDB_PORT: String(postgres.port),
		DB_POSTGRESDB_DATABASE: postgres.database,
		DB_POSTGRESDB_USER: postgres.user,
		DB_POSTGRESDB_PASSWORD: '',
		N8N_DEFAULT_BINARY_DATA_MODE: binaryDataMode,
		N8N_AVAILABLE_BINARY_DATA_MODES: 'filesystem,database',
		N8N_ENCRYPTION_KEY: encryptionKey,
	};
}

function matches(text: string, pattern: RegExp): string[] {
	return [...text.matchAll(pattern)].map((match) => match[1]);
}

function filesUnder(dir: string): string[] {
	if (!fs.existsSync(dir)) return [];
	return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, logs: () => string): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (await check()) return;
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
	throw new Error(`${what} did not happen within ${timeoutMs} ms:\n${tail(logs(), 60)}`);
}

/**
 * Waits for all starts; everything that started goes into `started` (to be stopped), even when another start
 * failed, so a failed set-up leaves nothing running.
 */
async function startTogether<T extends readonly unknown[]>(
	started: Array<{ stop(): Promise<void> }>,
	starts: { [K in keyof T]: Promise<T[K]> },
): Promise<T> {
	const results = await Promise.allSettled(starts);
	for (const result of results) {
		if (result.status === 'fulfilled') started.push(result.value as { stop(): Promise<void> });
	}
	const failed = results.find((result) => result.status === 'rejected');
	if (failed) throw (failed as PromiseRejectedResult).reason;
	return results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** `n8n worker` from its own home; ready once its health server says the database and Redis are connected. */
async function startWorker(home: N8nHome, readyTimeoutMs: number, concurrency?: number): Promise<ServiceProcess> {
	const healthPort = await freePort();
	const env = home.env({
		QUEUE_HEALTH_CHECK_ACTIVE: 'true',
		QUEUE_HEALTH_CHECK_PORT: String(healthPort),
		N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		...(home.explicitExpressionEngine ? { N8N_EXPRESSION_ENGINE: home.explicitExpressionEngine } : {}),
	});
	home.record(`\n$ n8n worker (health port ${healthPort})\n`);
	const args = concurrency === undefined ? ['worker'] : ['worker', `--concurrency=${concurrency}`];
	const worker = startService(home.install.n8nBin, args, { cwd: home.dir, env, onOutput: (chunk) => home.record(chunk) });
	try {
		await waitFor(
			'n8n worker readiness',
			readyTimeoutMs,
			async () => {
				if (worker.exited()) throw new Error(`n8n worker exited:\n${tail(worker.output())}`);
				try {
					return (await fetch(`http://127.0.0.1:${healthPort}/healthz/readiness`, { headers: FRESH_CONNECTION })).status === 200;
				} catch {
					return false;
				}
			},
			worker.output,
		);
	} catch (error) {
		await worker.stop();
		throw error;
	}
	return worker;
}

/**
 * The credential and the workflows into the running main, activated there; returns the workflow ids, which are the
 * workflows' own: callers (tests, bench/scale) name them by the ids they gave. n8n 2.x keeps a given id over REST;
 * 1.x assigns its own, so there the main's CLI imports them (into the shared database) and REST activates them.
 */
async function importAndActivate(
	main: N8nServer,
	home: N8nHome,
	workflows: Array<Record<string, unknown>>,
	credential: CredentialImport,
): Promise<string[]> {
	let ids: string[];
	if (home.install.major === 1) {
		await home.importCredential(credential);
		ids = await home.importWorkflows(workflows);
	} else {
		await main.importCredential(credential);
		ids = await main.importWorkflows(workflows);
	}
	const lost = workflows.filter((workflow, index) => typeof workflow.id === 'string' && workflow.id !== ids[index]);
	if (lost.length > 0) throw new Error(`n8n gave ${lost.length} workflow(s) other ids than their own: ${ids.join(', ')}`);
	await main.activateWorkflows(ids);
	return ids;
}

export async function startQueueCluster(options: QueueClusterOptions): Promise<QueueCluster> {
	const readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
	const { redisServer, postgresBin } = ensureQueueServices();
	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-queue-'));
	fs.chmodSync(root, 0o755); // PostgreSQL runs as its own account and must reach root/postgres
	const services: Array<{ stop(): Promise<void> }> = [];
	const n8nProcesses: Array<{ stop(): Promise<void> }> = [];
	const homes: N8nHome[] = [];
	const cleanUp = async () => {
		// n8n first (it would keep retrying a lost Redis), then Redis and PostgreSQL.
		await Promise.allSettled(n8nProcesses.map((service) => service.stop()));
		await Promise.allSettled(services.map((service) => service.stop()));
		await Promise.allSettled(homes.map((home) => home.dispose()));
		if (process.env.GEN_GATEWAY_E2E_KEEP !== '1') fs.rmSync(root, { recursive: true, force: true });
	};

	try {
		const [redis, postgres] = await startTogether(services, [
			startRedis(redisServer, path.join(root, 'redis')),
			startPostgres(postgresBin, path.join(root, 'postgres')),
		]);
		const env = { ...queueEnv(redis, postgres, randomBytes(24).toString('hex'), options.binaryDataMode ?? 'database'), ...options.env };
		const mainHome = await createN8nHome({ build: true, env });
		homes.push(mainHome);
		const workerHome = await createN8nHome({ env });
		homes.push(workerHome);

		// The main first: its start runs n8n's migrations on PostgreSQL (1.x takes no migration lock: a worker starting
		// beside it could run them twice).
		const [main] = await startTogether(n8nProcesses, [mainHome.startServer({ readyTimeoutMs })]);
		// Then the worker, while the main imports and activates the workflows through its REST API as the editor does.
		const credential = { id: randomId(), name: 'Gen Gateway (queue e2e)' };
		const workflows = [videoWebhookWorkflow(credential), ...(options.extraWorkflows?.(credential) ?? [])];
		const [started, imported] = await Promise.allSettled([
			startTogether(n8nProcesses, [startWorker(workerHome, readyTimeoutMs, options.workerConcurrency)]),
			importAndActivate(main, mainHome, workflows, {
				...credential,
				type: 'genGatewayApi',
				data: { baseUrl: options.baseUrl, apiKey: options.apiKey },
			}),
		]);
		if (started.status === 'rejected') throw started.reason;
		if (imported.status === 'rejected') throw imported.reason;
		const [firstWorker] = started.value;
		const [workflowId] = imported.value;
		// Production webhooks answer once the main has registered the active workflow's webhook (after its REST API
		// answers). A CORS preflight asks which methods the path has without running anything: 204 with POST once
		// registered, an error before (n8n 1.x and 2.x alike).
		const webhookUrl = `${main.url}/webhook/${WEBHOOK_PATH}`;
		await waitFor(
			'registration of the production webhook on the main',
			readyTimeoutMs,
			async () => {
				const preflight = await fetch(webhookUrl, {
					method: 'OPTIONS',
					headers: { ...FRESH_CONNECTION, origin: main.url, 'access-control-request-method': 'POST' },
				});
				return preflight.status === 204 && /\bPOST\b/.test(preflight.headers.get('access-control-allow-methods') ?? '');
			},
			() => mainHome.logs(),
		);

		let worker = firstWorker;
		const workerOutputs: Array<() => string> = [];
		const allWorkerOutput = () => [...workerOutputs, worker.output].map((output) => output()).join('\n');
		return {
			redis,
			postgres,
			mainHome,
			workerHome,
			main,
			get worker() {
				return worker;
			},
			restartWorker: async () => {
				await worker.stop('SIGKILL', 0);
				workerOutputs.push(worker.output);
				worker = await startWorker(workerHome, readyTimeoutMs, options.workerConcurrency);
				n8nProcesses.push(worker);
			},
			workflowId,
			webhookUrl,
			callWebhook: async (body, timeoutMs = 180_000) =>
				await timed('run', 'webhook call', async () => {
					const response = await fetch(webhookUrl, {
						method: 'POST',
						headers: { ...FRESH_CONNECTION, 'content-type': 'application/json' },
						body: JSON.stringify(body),
						signal: AbortSignal.timeout(timeoutMs),
					});
					return {
						status: response.status,
						contentType: response.headers.get('content-type'),
						body: Buffer.from(await response.arrayBuffer()),
					};
				}),
			enqueuedByMain: () => matches(mainHome.logs(), /Enqueued execution (\d+) \(job/g),
			workerOutput: allWorkerOutput,
			startedByWorker: () => matches(allWorkerOutput(), /Worker started execution (\d+) \(job/g),
			binaryFilesOnDisk: (home) => ['binaryData', 'storage'].flatMap((base) => filesUnder(path.join(home.n8nFolder, base))),
			stop: cleanUp,
		};
	} catch (error) {
		await cleanUp();
		throw error;
	}
}
