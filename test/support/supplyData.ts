import { ExecutionLifecycleHooks, SupplyDataContext } from 'n8n-core';
import type { INode, ISupplyDataFunctions, IWorkflowExecuteAdditionalData } from 'n8n-workflow';
import { NodeConnectionTypes, Workflow, createRunExecutionData } from 'n8n-workflow';

import { HarnessCredentialTypes } from '../harness/credential-types';
import { HarnessCredentialsHelper } from '../harness/credentials-helper';
import { additionalDataFor } from '../harness/engine';
import { buildNodeTypes } from '../harness/node-types';
import { setupCoreServices } from '../harness/services';
import { CREDENTIAL_REF, CREDENTIAL_TYPE } from '../harness/workflow-builder';

/** What n8n stored and logged for the sub-node during a call (its output data, its AI events). */
export interface SupplyRecord {
	outputs: unknown[];
	aiEvents: unknown[];
}

interface SupplyOptions {
	baseUrl: string;
	apiKey: string;
	parameters: Record<string, unknown>;
	executionId?: string;
	/** The credential the node references: its id is the pace's key (pacer.ts). */
	credential?: { id: string; name: string };
}

/**
 * n8n-core's real SupplyDataContext (what an AI root node's getInputConnectionData hands a sub-node's supplyData) for
 * the Gen Gateway Chat Model, its credential pointing at `baseUrl`: n8n's own httpRequestWithAuthentication, cancel
 * signal, execution id and run index. The output data and AI events the SDK's tracing writes are recorded.
 */
export function chatModelSupplyContext(options: SupplyOptions): { ctx: ISupplyDataFunctions; record: SupplyRecord } {
	setupCoreServices();
	const nodeTypes = buildNodeTypes();
	const node: INode = {
		id: 'cm1',
		name: 'Gen Gateway Chat Model',
		type: nodeTypes.fullType('genGatewayChatModel'),
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters as INode['parameters'],
		credentials: { [CREDENTIAL_TYPE]: { ...(options.credential ?? CREDENTIAL_REF) } },
	};
	const workflowData = { id: 'w-chat-model', name: 'Chat Model wire', active: false, nodes: [node], connections: {} };
	const workflow = new Workflow({ ...workflowData, nodeTypes });
	const credentialsHelper = new HarnessCredentialsHelper(new HarnessCredentialTypes(), nodeTypes, {
		[CREDENTIAL_TYPE]: { baseUrl: options.baseUrl, apiKey: options.apiKey },
	});
	const executionId = options.executionId ?? `chat-model-${process.pid}-${Math.random().toString(36).slice(2)}`;
	const hooks = new ExecutionLifecycleHooks('manual', executionId, {
		...workflowData,
		isArchived: false,
		activeVersionId: null,
		createdAt: new Date(),
		updatedAt: new Date(),
	} as never);
	const record: SupplyRecord = { outputs: [], aiEvents: [] };
	const additionalData: IWorkflowExecuteAdditionalData = {
		...additionalDataFor(executionId, credentialsHelper, hooks, undefined),
		logAiEvent: (event: unknown, payload: unknown) => {
			record.aiEvents.push({ event, payload });
		},
	} as IWorkflowExecuteAdditionalData;
	const input = [{ json: {} }];
	const ctx = new SupplyDataContext(
		workflow,
		node,
		additionalData,
		'manual',
		createRunExecutionData({}),
		0,
		input,
		{ main: [input] },
		NodeConnectionTypes.AiLanguageModel,
		{ node, data: { main: [input] }, source: null },
		[],
	);
	// The run data n8n would save for the sub-node: recorded, not written.
	Object.assign(ctx, {
		addInputData: () => ({ index: 0 }),
		addOutputData: (_type: unknown, _index: unknown, data: unknown) => {
			record.outputs.push(data);
		},
	});
	return { ctx, record };
}
