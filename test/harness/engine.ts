/**
 * Runs workflows with this package's nodes through n8n's real engine (n8n-core WorkflowExecute,
 * n8n-workflow Workflow) inside jest: the real execute context, `httpRequestWithAuthentication`
 * (axios in n8n-core), binary data service, Retry On Fail / Continue On Fail, and cancellation.
 * Only what the n8n server adds around the engine (database, credentials store, config) is ours.
 */
import { ExecutionLifecycleHooks, ExternalSecretsProxy, WorkflowExecute } from 'n8n-core';
import type { BinaryDataService } from 'n8n-core';
import type {
	ICredentialType,
	INodeType,
	INodeTypes,
	IRun,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { UnexpectedError, Workflow, createRunExecutionData } from 'n8n-workflow';
import { rm } from 'node:fs/promises';

import { DEFAULT_CANCEL_GRACE_MS, cancelOnSignalOrTimeout } from './cancel';
import { HarnessCredentialTypes } from './credential-types';
import { HarnessCredentialsHelper } from './credentials-helper';
import { buildNodeTypes } from './node-types';
import type { RunResult } from './result';
import { buildResult } from './result';
import type { BinaryMode } from './services';
import { setupBinaryData, setupCoreServices, shutDownRunServices } from './services';
import type { HarnessNode } from './workflow-builder';
import { CREDENTIAL_TYPE, START_NODE_NAME, buildWorkflowGraph } from './workflow-builder';

export type { HarnessNode } from './workflow-builder';
export type { RunResult } from './result';
export { HARNESS_NODE_TYPES } from './helper-nodes';
export { CREDENTIAL_TYPE, ITEMS_NODE_NAME, START_NODE_NAME } from './workflow-builder';
export { packageCredentialTypes } from './credential-types';

export interface RunOptions {
	/** Executed as a chain in array order after the built-in Start node (and Items node when `input` is given). */
	nodes: HarnessNode[];
	/** JSON items fed to the first node, through a built-in Items node. */
	input?: Array<Record<string, unknown>>;
	/** The genGatewayApi credential data; attached to nodes with `credentials: true`. */
	credentials?: { baseUrl: string; apiKey: string };
	/** 'filesystem' stores binary data in a temp folder that `result.cleanup()` removes. Default 'default' (memory). */
	binaryMode?: BinaryMode;
	/** Cancels the execution (WorkflowExecute's cancel) when aborted; nodes see getExecutionCancelSignal() fire. */
	signal?: AbortSignal;
	executionId?: string;
	/** The workflow's execution timeout: cancels like n8n's timeout does (the run ends with a timeout error). */
	timeoutMs?: number;
	/** Test-only node types, registered by their description.name. */
	extraNodeTypes?: Array<INodeType | IVersionedNodeType>;
	/** Test-only credential types; the package's own credential types win over extras of the same name. */
	extraCredentialTypes?: ICredentialType[];
	/** Execution mode given to the engine. Default 'manual' (as when a user clicks "Execute workflow"). */
	mode?: WorkflowExecuteMode;
	/** After a cancel, how long the execution may take to stop before runWorkflow rejects. Default 5000. */
	cancelGraceMs?: number;
	/** Runs the sub-workflows a node starts (`this.executeWorkflow`); without it they fail as unsupported. */
	executeWorkflow?: IWorkflowExecuteAdditionalData['executeWorkflow'];
}

const WORKFLOW_ID = 'harnessWorkflow1';
let executionCounter = 0;

/**
 * Runs are serialised: the engine's logger and binary data service are process-wide. The next run
 * also waits for an execution that outlived its runWorkflow call (one stuck after a cancel).
 */
let queue: Promise<unknown> = Promise.resolve();
let engineSettled: Promise<unknown> = Promise.resolve();
function exclusive<T>(task: () => Promise<T>): Promise<T> {
	const result = queue.then(async () => {
		await engineSettled;
		return await task();
	});
	queue = result.catch(() => undefined);
	return result;
}

/** This package's node types (nodes/<Folder>/<Name>.node.ts) plus the harness helper nodes. */
export function loadPackageNodeTypes(): INodeTypes {
	return buildNodeTypes();
}

export async function runWorkflow(opts: RunOptions): Promise<RunResult> {
	return await exclusive(async () => (await runNow([opts]))[0]);
}

/**
 * Runs several workflows at once, as one n8n process runs several executions (give each its own `executionId`): one
 * logger and one binary data service for all of them (the first run's binaryMode). Each result's cleanup removes
 * the binary folder they share: clean up after reading them all.
 */
export async function runWorkflowsTogether(runs: RunOptions[]): Promise<RunResult[]> {
	return await exclusive(async () => await runNow(runs));
}

function workflowBase(graph: Pick<IWorkflowBase, 'nodes' | 'connections' | 'settings'>): IWorkflowBase {
	const now = new Date();
	return { id: WORKFLOW_ID, name: 'Harness workflow', active: false, isArchived: false, activeVersionId: null, createdAt: now, updatedAt: now, ...graph };
}

/** The services n8n's server hands a run, as far as the harness has them (also used by the saved-workflow runner). */
export function additionalDataFor(
	executionId: string,
	credentialsHelper: HarnessCredentialsHelper,
	hooks: ExecutionLifecycleHooks,
	timeoutMs: number | undefined,
): IWorkflowExecuteAdditionalData {
	const base = 'http://127.0.0.1:5678';
	const unsupported = (what: string) => async () => {
		throw new UnexpectedError(`${what} is not supported by the test harness`);
	};
	return {
		credentialsHelper,
		hooks,
		externalSecretsProxy: new ExternalSecretsProxy(), // no secrets providers
		executionId,
		currentNodeExecutionIndex: 0,
		executeWorkflow: unsupported('Executing a sub-workflow'),
		getRunExecutionData: async () => undefined,
		startRunnerTask: unsupported('A task runner'),
		logAiEvent: () => {},
		variables: {},
		restApiUrl: `${base}/rest`,
		instanceBaseUrl: `${base}/`,
		formWaitingBaseUrl: `${base}/form-waiting`,
		webhookBaseUrl: `${base}/webhook`,
		webhookWaitingBaseUrl: `${base}/webhook-waiting`,
		webhookTestBaseUrl: `${base}/webhook-test`,
		formBaseUrl: `${base}/form`,
		formTestBaseUrl: `${base}/form-test`,
		mcpBaseUrl: `${base}/mcp`,
		mcpTestBaseUrl: `${base}/mcp-test`,
		getRuntimeCredential: async () => undefined,
		...(timeoutMs !== undefined ? { executionTimeoutTimestamp: Date.now() + timeoutMs } : {}),
	};
}

async function runNow(runs: RunOptions[]): Promise<RunResult[]> {
	const logger = setupCoreServices();
	const logs = logger.startRun();
	const { service: binaryData, folder: binaryFolder } = await setupBinaryData(runs[0]?.binaryMode ?? 'default');
	try {
		const running = runs.map((opts) => startRun(opts, { logs, binaryData, binaryFolder }));
		engineSettled = Promise.allSettled(running.map((run) => run.settled));
		const ended = await Promise.allSettled(running.map(async (run) => await run.result));
		const failed = ended.find((end) => end.status === 'rejected');
		if (failed) throw failed.reason;
		return ended.map((end) => (end as PromiseFulfilledResult<RunResult>).value);
	} catch (error) {
		if (binaryFolder) await rm(binaryFolder, { recursive: true, force: true });
		throw error;
	} finally {
		shutDownRunServices();
	}
}

/** Starts one execution on the services set up for it; `settled` ends when the engine does (even after a reject). */
function startRun(
	opts: RunOptions,
	services: { logs: string[]; binaryData: BinaryDataService; binaryFolder?: string },
): { result: Promise<RunResult>; settled: Promise<unknown> } {
	const mode = opts.mode ?? 'manual';
	const nodeTypes = buildNodeTypes(opts.extraNodeTypes);
	const tries = new Map<string, number>();
	const credentialsHelper = new HarnessCredentialsHelper(
		new HarnessCredentialTypes(opts.extraCredentialTypes),
		nodeTypes,
		opts.credentials ? { [CREDENTIAL_TYPE]: { ...opts.credentials } } : {},
	);

	const graph = { ...buildWorkflowGraph(opts.nodes, opts.input, nodeTypes), settings: { executionOrder: 'v1' as const } };
	const workflow = new Workflow({ ...workflowBase(graph), nodeTypes: nodeTypes.withExecuteCounting(tries) });
	const executionId = opts.executionId ?? `harness-${process.pid}-${++executionCounter}`;
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowBase(graph));
	const additionalData = additionalDataFor(executionId, credentialsHelper, hooks, opts.timeoutMs);
	if (opts.executeWorkflow) additionalData.executeWorkflow = opts.executeWorkflow;

	// Like a manual trigger: the start node gets one empty item.
	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [{ node: workflow.getNode(START_NODE_NAME)!, data: { main: [[{ json: {} }]] }, source: null }],
		},
	});
	const running = new WorkflowExecute(additionalData, mode, runExecutionData).processRunExecutionData(workflow);
	const result = (async () => {
		const run: IRun = await cancelOnSignalOrTimeout(running, {
			signal: opts.signal,
			timeoutMs: opts.timeoutMs,
			graceMs: opts.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
		});
		const lastNodeName = graph.nodes[graph.nodes.length - 1].name;
		return buildResult({ run, lastNodeName, ...services, tries });
	})();
	return { result, settled: running.catch(() => undefined) };
}
