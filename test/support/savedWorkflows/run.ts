/**
 * Runs a saved workflow as it is stored (its own nodes, connections and settings) through n8n-core's WorkflowExecute,
 * like "Execute workflow" from its Manual Trigger, with the harness's services and credentials store; then reads what
 * reached the mock, normalised so that the same workflow gives the same list on every run.
 */
import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import type { INode, IRun, IWorkflowBase } from 'n8n-workflow';
import { Workflow, createRunExecutionData } from 'n8n-workflow';
import { rm } from 'node:fs/promises';

import { HarnessCredentialTypes } from '../../harness/credential-types';
import { HarnessCredentialsHelper } from '../../harness/credentials-helper';
import { additionalDataFor } from '../../harness/engine';
import { setupBinaryData, setupCoreServices, shutDownRunServices } from '../../harness/services';
import type { MockClient } from '../../mock/client';
import type { LogEntry } from '../../mock/types';
import type { SavedWorkflow } from './editor';
import type { DescriptionMutation, ToolCall } from './nodeTypes';
import { fixtureNodeTypes } from './nodeTypes';
import { LEDGER_COLUMNS } from '../../../nodes/shared/ledger/ledgerTable';
import { FakeDataTable } from '../fakeDataTable';
import { SAVED_LEDGER_TABLE } from './spec';

export interface RecordedRequest {
	method: string;
	path: string;
	status: number;
	body?: unknown;
}

export interface Expected {
	/** What the agent stand-in asks each tool (only for workflows with an AI Agent). */
	toolCalls?: ToolCall[];
	requests: RecordedRequest[];
	/** What each of our nodes put out (normalisedOutputs). */
	outputs: Record<string, unknown[]>;
}

let executions = 0;

export async function runSaved(
	workflowData: SavedWorkflow,
	mock: Pick<MockClient, 'url' | 'apiKey'>,
	toolCalls: ToolCall[] = [],
	mutate?: DescriptionMutation,
): Promise<IRun> {
	const logger = setupCoreServices();
	logger.startRun();
	const { folder } = await setupBinaryData('filesystem');
	try {
		const nodeTypes = fixtureNodeTypes(toolCalls, mutate);
		// n8n's Workflow fills every node's defaults into its parameters in place: run a copy.
		const saved = structuredClone(workflowData);
		const base = {
			...saved,
			active: false,
			isArchived: false,
			activeVersionId: null,
			createdAt: new Date(),
			updatedAt: new Date(),
			nodes: saved.nodes as INode[],
		} as IWorkflowBase;
		const workflow = new Workflow({ ...base, nodeTypes });
		const executionId = `saved-${process.pid}-${++executions}`;
		const credentialsHelper = new HarnessCredentialsHelper(new HarnessCredentialTypes(), nodeTypes, {
			genGatewayApi: { baseUrl: mock.url, apiKey: mock.apiKey },
		});
		const additionalData = additionalDataFor(
			executionId,
			credentialsHelper,
			new ExecutionLifecycleHooks('manual', executionId, base),
			undefined,
		);
		// Generate's Task Ledger and Recover write and read an n8n Data Table through a sub-workflow: one in memory.
		additionalData.executeWorkflow = new FakeDataTable(SAVED_LEDGER_TABLE, LEDGER_COLUMNS).engineExecuteWorkflow;
		const trigger = saved.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger');
		if (!trigger) throw new Error(`${workflowData.name}: no Manual Trigger to start from`);
		const runExecutionData = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [{ node: workflow.getNode(trigger.name)!, data: { main: [[{ json: {} }]] }, source: null }],
			},
		});
		return await new WorkflowExecute(additionalData, 'manual', runExecutionData).processRunExecutionData(workflow);
	} finally {
		shutDownRunServices();
		if (folder) await rm(folder, { recursive: true, force: true });
	}
}

/** Names the ids the service or n8n makes up (`<task 1>`, `<image 1>`…) by first appearance, and masks times. */
function makeMasker(now = Date.now() / 1000) {
	const names = new Map<string, string>();
	const counts = new Map<string, number>();
	const name = (id: string, kind: string) => {
		if (!names.has(id)) {
			counts.set(kind, (counts.get(kind) ?? 0) + 1);
			names.set(id, `<${kind} ${counts.get(kind)}>`);
		}
		return names.get(id)!;
	};
	const text = (value: string) =>
		value
			.replace(/task_[0-9a-f]{8,}/g, (id) => name(id, 'task'))
			.replace(/img_[0-9a-f]{8,}/g, (id) => name(id, 'image'))
			.replace(/\/tmp-media\/([^/.]+)\.mp4/g, (_, id: string) => `/tmp-media/${name(id, 'media')}.mp4`)
			.replace(/\b(chatcmpl-|resp_|msg_)[0-9a-f]{8,}/g, '$1<id>')
			.replace(/http:\/\/127\.0\.0\.1:\d+/g, '<mock>')
			.replace(/^filesystem-v2:.*$/, '<binary id>')
			.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
	const deep = (value: unknown, key = ''): unknown => {
		if (typeof value === 'string') return text(value);
		if (typeof value === 'number') {
			if (key === 'waited_seconds') return '<seconds>';
			if (/^created(_at)?$/.test(key) && Math.abs(value - now) < 86_400) return '<time>';
			return value;
		}
		if (Array.isArray(value)) return value.map((entry) => deep(entry));
		if (value && typeof value === 'object') {
			return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v, k)]));
		}
		return value;
	};
	return deep;
}

/** The requests in the mock's log, in order: method, path (with query), status and JSON body, ids masked. */
export function normalisedRequests(log: LogEntry[]): RecordedRequest[] {
	const mask = makeMasker();
	return log.map((entry) =>
		mask({
			method: entry.method,
			path: entry.path,
			status: entry.status,
			...(entry.body === undefined ? {} : { body: entry.body }),
		}),
	) as RecordedRequest[];
}

/**
 * What each of our nodes put out, per run: items on every output (main, or ai_tool for a tool), or the error message;
 * ids and times masked. The stand-ins for n8n's own nodes are left out.
 */
export function normalisedOutputs(run: IRun, nodes: SavedWorkflow['nodes']): Record<string, unknown[]> {
	const mask = makeMasker();
	const ours = new Set(nodes.filter((node) => node.type.startsWith('n8n-nodes-gen-gateway.')).map((node) => node.name));
	const outputs: Record<string, unknown[]> = {};
	for (const [name, tasks] of Object.entries(run.data.resultData.runData)) {
		if (!ours.has(name)) continue;
		outputs[name] = tasks.map((task) =>
			mask(task.error ? { error: task.error.message } : Object.fromEntries(Object.entries(task.data ?? {}))),
		);
	}
	return outputs;
}
