/**
 * Runs Start → Items → Root(s) with the Gen Gateway Chat Model attached on ai_languageModel, on n8n-core's engine.
 * The root node mimics n8n's LangChain root nodes: 'perItem' asks getInputConnectionData(ai_languageModel, 0) for every
 * item (Basic LLM Chain, Retrieval QA: processItem), 'once' asks once per run and shares the model across items (Tools
 * Agent V2/V3: getChatModel(this, 0) before the batch loop). Errors become error items under Continue On Fail.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeParameters, INodeType, INodeTypeDescription, IRun, IWorkflowBase } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { buildNodeTypes } from '../harness/node-types';
import { CREDENTIAL_REF, CREDENTIAL_TYPE } from '../harness/workflow-builder';
import { runFromStart } from './subNodeRun';

interface Invokable {
	invoke(input: unknown): Promise<{ text?: string; content?: unknown }>;
}

export class ModelRoot implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Root',
		name: 'modelRoot',
		group: ['transform'],
		version: 1,
		description: 'test',
		defaults: { name: 'Root' },
		inputs: [NodeConnectionTypes.Main, { type: NodeConnectionTypes.AiLanguageModel, displayName: 'Model', required: true, maxConnections: 1 }],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Supply', name: 'supply', type: 'options', options: [{ name: 'per item', value: 'perItem' }, { name: 'once', value: 'once' }], default: 'perItem' },
			{ displayName: 'Parallel', name: 'parallel', type: 'boolean', default: false },
			{ displayName: 'Prompt', name: 'prompt', type: 'string', default: '={{ $json.q }}' },
			{ displayName: 'Agent loop', name: 'agentLoop', type: 'boolean', default: false },
			// A system message before the prompt (not part of a call's identity: tests mark rows with it).
			{ displayName: 'System', name: 'system', type: 'string', default: '' },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const supply = this.getNodeParameter('supply', 0) as string;
		const parallel = this.getNodeParameter('parallel', 0) as boolean;
		const get = async () => (await this.getInputConnectionData(NodeConnectionTypes.AiLanguageModel, 0)) as Invokable;
		const shared = supply === 'once' ? await get() : undefined;
		const one = async (i: number): Promise<INodeExecutionData> => {
			const model = shared ?? (await get());
			try {
				const prompt = this.getNodeParameter('prompt', i) as string;
				const system = this.getNodeParameter('system', i) as string;
				let answer = await model.invoke(system ? [['system', system], ['human', prompt]] : prompt);
				// An agent's loop (AgentExecutor, in-process tools: Agent V1/V2): a tool call is followed by another call.
				if (this.getNodeParameter('agentLoop', 0) as boolean) {
					for (let step = 1; step < 4 && (answer.text ?? answer.content) === 'TOOL'; step++) {
						answer = await model.invoke(`${prompt} [tool result ${step}]`);
					}
				}
				return { json: { text: (answer.text ?? answer.content) as IDataObject[string] }, pairedItem: { item: i } };
			} catch (error) {
				if (!this.continueOnFail()) throw error;
				return { json: { error: (error as Error).message }, pairedItem: { item: i } };
			}
		};
		const out: INodeExecutionData[] = [];
		if (parallel) out.push(...(await Promise.all(items.map(async (_, i) => await one(i)))));
		else for (let i = 0; i < items.length; i++) out.push(await one(i));
		return [out];
	}
}

export async function runWithModel(opts: {
	roots: Array<{ name: string; parameters?: INodeParameters; settings?: Record<string, unknown> }>;
	input: Array<Record<string, unknown>>;
	modelParameters?: INodeParameters;
	credentials: { baseUrl: string; apiKey: string };
}): Promise<IRun> {
	const nodeTypes = buildNodeTypes([new ModelRoot()]);
	const at = (x: number, y = 0) => [x, y] as [number, number];
	const nodes: IWorkflowBase['nodes'] = [
		{ id: 's', name: 'Start', type: 'harness.start', typeVersion: 1, position: at(0), parameters: {} },
		{ id: 'i', name: 'Items', type: 'harness.items', typeVersion: 1, position: at(100), parameters: { items: JSON.stringify(opts.input) } },
		...opts.roots.map((root, n) => ({
			id: `r${n}`, name: root.name, type: nodeTypes.fullType('modelRoot'), typeVersion: 1, position: at(200 + n * 100),
			parameters: root.parameters ?? {}, ...(root.settings ?? {}),
		})),
		{
			id: 'm', name: 'Model', type: nodeTypes.fullType('genGatewayChatModel'), typeVersion: 1, position: at(200, 200),
			parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: { maxRetries: 0 }, ...(opts.modelParameters ?? {}) },
			credentials: { [CREDENTIAL_TYPE]: { ...CREDENTIAL_REF } },
		},
	];
	const chain = ['Start', 'Items', ...opts.roots.map((r) => r.name)];
	const connections: IWorkflowBase['connections'] = {};
	for (let k = 0; k + 1 < chain.length; k++) connections[chain[k]] = { main: [[{ node: chain[k + 1], type: 'main', index: 0 }]] };
	connections.Model = { ai_languageModel: [opts.roots.map((r) => ({ node: r.name, type: 'ai_languageModel', index: 0 }))] };
	return await runFromStart({ name: 'model', nodeTypes, nodes, connections, credentials: opts.credentials });
}

export const rootOutput = (run: IRun, name: string) =>
	(run.data.resultData.runData[name]?.[run.data.resultData.runData[name].length - 1]?.data?.main?.[0] ?? []).map((i) => i.json);
