/**
 * Runs Start → Caller with one of the package's nodes attached as an AI tool: n8n-core's createNodeAsTool path (the
 * tool run inside the agent), or, with `engine`, n8n 2.x's engine requests (Agent V3: the agent hands the step's tool
 * calls to the engine, which runs each as a node run of its own with the call's id in its item, then resumes it).
 */
import type { EngineResponse, IDataObject, IExecuteFunctions, INodeExecutionData, NodeOutput, INodeParameters, INodeType, INodeTypeDescription, IRun, IWorkflowBase } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { buildNodeTypes } from '../harness/node-types';
import { CREDENTIAL_REF, CREDENTIAL_TYPE } from '../harness/workflow-builder';
import { runFromStart } from './subNodeRun';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';

/** What n8n's loader makes of a `usableAsTool` node: same execute, outputs ai_tool. */
function asTool<T extends INodeType>(node: T): T {
	const d = node.description;
	node.description = {
		...d,
		name: `${d.name}Tool`,
		inputs: [],
		outputs: [NodeConnectionTypes.AiTool],
		properties: [...d.properties, { displayName: 'Description', name: 'toolDescription', type: 'string', default: 'a tool' }],
	} as INodeTypeDescription;
	return node;
}
export const imageTool = () => asTool(new GenGatewayImage());
export const chatTool = () => asTool(new GenGatewayChat());

/**
 * An agent-like root node: asks for its tools and calls the first one `calls` times (in parallel when `parallel`), or,
 * given `steps` (a JSON list of steps, each a list of the calls' arguments), runs the steps one after the other and
 * each step's calls at once, as LangChain runs one agent step's tool calls; every call gets its own arguments object,
 * as LangChain's parse of a tool call makes one. `failOnError`: the run fails when a call failed (so that the node's
 * Retry On Fail, the agent's own retry, runs the same steps again).
 */
export class ToolCaller implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Caller',
		name: 'toolCaller',
		group: ['transform'],
		version: 1,
		description: 'test',
		defaults: { name: 'Caller' },
		inputs: [NodeConnectionTypes.Main, { type: NodeConnectionTypes.AiTool, displayName: 'Tools', required: true }],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Calls', name: 'calls', type: 'number', default: 1 },
			{ displayName: 'Parallel', name: 'parallel', type: 'boolean', default: false },
			{ displayName: 'Supply per call', name: 'supplyPerCall', type: 'boolean', default: false },
			{ displayName: 'Steps', name: 'steps', type: 'string', default: '' },
			{ displayName: 'Fail on error', name: 'failOnError', type: 'boolean', default: false },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const calls = this.getNodeParameter('calls', 0) as number;
		const parallel = this.getNodeParameter('parallel', 0) as boolean;
		const supplyPerCall = this.getNodeParameter('supplyPerCall', 0) as boolean;
		const getTool = async () => {
			const tools = (await this.getInputConnectionData(NodeConnectionTypes.AiTool, 0)) as unknown;
			return (Array.isArray(tools) ? tools[0] : tools) as { func: (args: object) => Promise<string> };
		};
		const shared = supplyPerCall ? undefined : await getTool();
		const one = async (i: number) => {
			const tool = shared ?? (await getTool());
			try {
				return await tool.func({ call: i, subject: `subject ${i}` });
			} catch (error) {
				return `ERROR ${(error as Error).message}`;
			}
		};
		const steps = this.getNodeParameter('steps', 0) as string;
		const results: string[] = [];
		if (steps) {
			const tool = shared ?? (await getTool());
			const call = async (args: object) => {
				try {
					return await tool.func(JSON.parse(JSON.stringify(args)) as object);
				} catch (error) {
					return `ERROR ${(error as Error).message}`;
				}
			};
			for (const step of JSON.parse(steps) as object[][]) results.push(...(await Promise.all(step.map(call))));
		} else if (parallel) {
			results.push(...(await Promise.all(Array.from({ length: calls }, async (_, i) => await one(i)))));
		} else {
			for (let i = 0; i < calls; i++) results.push(await one(i));
		}
		if (this.getNodeParameter('failOnError', 0) as boolean && results.some((r) => r.startsWith('ERROR'))) {
			throw new Error(`a tool call failed: ${results.find((r) => r.startsWith('ERROR'))}`);
		}
		return [[{ json: { results } }]];
	}
}

/** An agent-like root node on the engine-request path: one step of tool calls (`steps`' first), then their results. */
export class EngineCaller implements INodeType {
	description: INodeTypeDescription = { ...new ToolCaller().description, displayName: 'Engine caller', name: 'engineCaller' };

	async execute(this: IExecuteFunctions, response?: EngineResponse): Promise<NodeOutput> {
		if (response?.actionResponses?.length) {
			const results = response.actionResponses.map((r) => JSON.stringify(r.data.data?.ai_tool?.[0]?.[0]?.json ?? r.data.error?.message));
			return [[{ json: { results } }]];
		}
		const [step] = JSON.parse(this.getNodeParameter('steps', 0) as string) as object[][];
		const actions = step.map((input, i) => ({
			actionType: 'ExecutionNodeAction' as const, nodeName: 'Tool', input: input as IDataObject, type: NodeConnectionTypes.AiTool,
			id: `call_${i}`, metadata: { itemIndex: 0 },
		}));
		return { actions, metadata: {} };
	}
}

export async function runWithTool(opts: {
	tool: INodeType;
	toolParameters: INodeParameters;
	toolSettings?: Record<string, unknown>;
	callerParameters?: INodeParameters;
	/** The caller's node settings (its Retry On Fail: the agent's own retry). */
	callerSettings?: Record<string, unknown>;
	/** The engine-request path (EngineCaller) instead of the tool run inside the caller. */
	engine?: boolean;
	credentials: { baseUrl: string; apiKey: string };
}): Promise<IRun> {
	const caller = opts.engine ? new EngineCaller() : new ToolCaller();
	const nodeTypes = buildNodeTypes([opts.tool, caller]);
	const nodes: IWorkflowBase['nodes'] = [
		{ id: 's', name: 'Start', type: 'harness.start', typeVersion: 1, position: [0, 0] as [number, number], parameters: {} },
		{ id: 'c', name: 'Caller', type: nodeTypes.fullType(caller.description.name), typeVersion: 1, position: [200, 0] as [number, number], parameters: opts.callerParameters ?? {}, ...(opts.callerSettings ?? {}) },
		{
			id: 't',
			name: 'Tool',
			type: nodeTypes.fullType(opts.tool.description.name),
			typeVersion: 1,
			position: [200, 200] as [number, number],
			parameters: opts.toolParameters,
			credentials: { [CREDENTIAL_TYPE]: { ...CREDENTIAL_REF } },
			...(opts.toolSettings ?? {}),
		},
	];
	const connections: IWorkflowBase['connections'] = {
		Start: { main: [[{ node: 'Caller', type: 'main', index: 0 }]] },
		Tool: { ai_tool: [[{ node: 'Caller', type: 'ai_tool', index: 0 }]] },
	};
	return await runFromStart({ name: 'tool', nodeTypes, nodes, connections, credentials: opts.credentials });
}
