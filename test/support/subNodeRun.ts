/**
 * Runs a workflow of root and sub-nodes on n8n-core's WorkflowExecute from its Start node, as the harness's
 * runWorkflow does for a chain of main nodes: for tests whose own root nodes ask for the package's nodes as sub-nodes
 * (a model on ai_languageModel, a tool on ai_tool; test/support/modelRoot.ts, toolCaller.ts).
 */
import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import type { IRun, IWorkflowBase } from 'n8n-workflow';
import { Workflow, createRunExecutionData } from 'n8n-workflow';

import { HarnessCredentialTypes } from '../harness/credential-types';
import { HarnessCredentialsHelper } from '../harness/credentials-helper';
import { additionalDataFor } from '../harness/engine';
import type { HarnessNodeTypes } from '../harness/node-types';
import { setupBinaryData, setupCoreServices, shutDownRunServices } from '../harness/services';
import { CREDENTIAL_TYPE } from '../harness/workflow-builder';

export async function runFromStart(opts: {
	name: string;
	nodeTypes: HarnessNodeTypes;
	nodes: IWorkflowBase['nodes'];
	connections: IWorkflowBase['connections'];
	credentials: { baseUrl: string; apiKey: string };
}): Promise<IRun> {
	setupCoreServices();
	await setupBinaryData('default');
	try {
		const now = new Date();
		const base = {
			...{ id: `wf-${opts.name}`, name: opts.name, active: false, isArchived: false, activeVersionId: null },
			...{ createdAt: now, updatedAt: now, nodes: opts.nodes, connections: opts.connections },
			settings: { executionOrder: 'v1' as const },
		} as unknown as IWorkflowBase;
		const workflow = new Workflow({ ...base, nodeTypes: opts.nodeTypes });
		const credentialsHelper = new HarnessCredentialsHelper(new HarnessCredentialTypes(), opts.nodeTypes, {
			[CREDENTIAL_TYPE]: { ...opts.credentials },
		});
		const executionId = `${opts.name}-${process.pid}-${Math.random().toString(36).slice(2)}`;
		const hooks = new ExecutionLifecycleHooks('manual', executionId, base);
		const additionalData = additionalDataFor(executionId, credentialsHelper, hooks, undefined);
		const runExecutionData = createRunExecutionData({
			executionData: { nodeExecutionStack: [{ node: workflow.getNode('Start')!, data: { main: [[{ json: {} }]] }, source: null }] },
		});
		return await new WorkflowExecute(additionalData, 'manual', runExecutionData).processRunExecutionData(workflow);
	} finally {
		shutDownRunServices();
	}
}
