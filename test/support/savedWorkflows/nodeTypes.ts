/**
 * Node types a saved workflow names, as n8n 2.41.1 resolves them, for the saved-workflow fixtures:
 * - this package's nodes (from nodes/, the current code) under `n8n-nodes-gen-gateway.<name>`;
 * - their `…Tool` variants, derived the way n8n's NodeTypes does for a usableAsTool node (`convertNodeToAiTool`,
 *   n8n 2.41.1 `dist/tool-generation/ai-tools.js`, copied below; its codex part is left out);
 * - stand-ins for the few n8n nodes around ours (Manual Trigger, No Operation, AI Agent, OpenAI Chat Model). They are
 *   not under test: the fixtures check our nodes; the real n8n e2e (savedWorkflows.e2e.test.ts) uses the real ones.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypeDescription,
	ISupplyDataFunctions,
	IVersionedNodeType,
	SupplyData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeHelpers, deepCopy, nodeNameToToolName } from 'n8n-workflow';

import { HarnessNodeTypes, packageNodeTypeEntries } from '../../harness/node-types';

type AnyNodeType = INodeType | IVersionedNodeType;

export const PACKAGE_PREFIX = 'n8n-nodes-gen-gateway.';

/** n8n's own node types the fixtures may use, with the versions the stand-ins accept. */
export const FOREIGN_TYPES: Record<string, number[]> = {
	'n8n-nodes-base.manualTrigger': [1],
	'n8n-nodes-base.noOp': [1],
	'@n8n/n8n-nodes-langchain.agent': [3.1],
	'@n8n/n8n-nodes-langchain.lmChatOpenAi': [1.3],
};

/** n8n 2.41.1's convertNodeToAiTool on a copy of the description (what the editor and the engine see for `<name>Tool`). */
export function toolDescription(base: INodeTypeDescription): INodeTypeDescription {
	const description = deepCopy(base);
	description.name += 'Tool';
	description.inputs = [];
	description.outputs = [NodeConnectionTypes.AiTool];
	description.displayName += ' Tool';
	delete description.usableAsTool;
	const names = description.properties.map((prop) => prop.name);
	const hasResourceOrOperation = names.includes('resource') || names.includes('operation');
	if (!names.includes('toolDescription')) {
		const descriptionType: INodeProperties = {
			displayName: 'Tool Description',
			name: 'descriptionType',
			type: 'options',
			noDataExpression: true,
			options: [
				{ name: 'Set Automatically', value: 'auto', description: 'Automatically set based on resource and operation' },
				{ name: 'Set Manually', value: 'manual', description: 'Manually set the description' },
			],
			default: 'auto',
		};
		const descProp: INodeProperties = {
			displayName: 'Description',
			name: 'toolDescription',
			type: 'string',
			default: description.description,
			required: true,
			typeOptions: { rows: 2 },
			description:
				'Explain to the LLM what this tool does, a good, specific description would allow LLMs to produce expected results much more often',
		};
		let lastCallout = -1;
		description.properties.forEach((prop, index) => {
			if (prop.type === 'callout') lastCallout = index;
		});
		description.properties.splice(lastCallout + 1, 0, descProp);
		if (hasResourceOrOperation) {
			description.properties.splice(lastCallout + 1, 0, descriptionType);
			descProp.displayOptions = { show: { descriptionType: ['manual'] } };
		}
	}
	return description;
}

/** The tool variant of a node type: its own execute, n8n's tool description (as n8n clones it: a prototype link). */
function toolVariant(nodeType: AnyNodeType): AnyNodeType {
	if ('nodeVersions' in nodeType) {
		const nodeVersions = Object.fromEntries(
			Object.entries(nodeType.nodeVersions).map(([version, versioned]) => [version, toolVariant(versioned) as INodeType]),
		);
		return {
			description: { ...nodeType.description, name: `${nodeType.description.name}Tool` },
			currentVersion: nodeType.currentVersion,
			nodeVersions,
			getNodeType: (version?: number) => nodeVersions[version ?? nodeType.currentVersion],
		} as IVersionedNodeType;
	}
	const variant = Object.create(nodeType) as INodeType;
	Object.defineProperty(variant, 'description', { value: toolDescription(nodeType.description) });
	return variant;
}

function standIn(name: string, version: number | number[], extra: Partial<INodeTypeDescription>): INodeTypeDescription {
	return {
		displayName: name,
		name,
		group: ['transform'],
		version,
		description: `Stand-in for n8n's ${name}`,
		defaults: { name },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
		...extra,
	};
}

class ManualTriggerStandIn implements INodeType {
	description = standIn('n8n-nodes-base.manualTrigger', FOREIGN_TYPES['n8n-nodes-base.manualTrigger'], {
		group: ['trigger'],
		inputs: [],
	});

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

class NoOpStandIn implements INodeType {
	description = standIn('n8n-nodes-base.noOp', FOREIGN_TYPES['n8n-nodes-base.noOp'], {});

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

class ChatModelStandIn implements INodeType {
	description = standIn('@n8n/n8n-nodes-langchain.lmChatOpenAi', FOREIGN_TYPES['@n8n/n8n-nodes-langchain.lmChatOpenAi'], {
		inputs: [],
		outputs: [NodeConnectionTypes.AiLanguageModel],
	});

	async supplyData(this: ISupplyDataFunctions): Promise<SupplyData> {
		throw new Error('the saved-workflow fixtures never ask the chat model: the agent stand-in calls the tools itself');
	}
}

export interface ToolCall {
	tool: string;
	args: Record<string, unknown>;
}

interface InvocableTool {
	name: string;
	invoke(args: Record<string, unknown>): Promise<unknown>;
}

/**
 * The AI Agent's side of a tool call without a model: it asks n8n-core for its connected tools
 * (`getInputConnectionData(ai_tool)`: createNodeAsTool, the $fromAI schema, makeHandleToolInvocation, which runs the
 * tool node's execute with the call's arguments as its input item), then calls each one as the model would have.
 */
function agentStandIn(calls: ToolCall[]): INodeType {
	return {
		description: standIn('@n8n/n8n-nodes-langchain.agent', FOREIGN_TYPES['@n8n/n8n-nodes-langchain.agent'], {
			inputs: [
				NodeConnectionTypes.Main,
				{ type: NodeConnectionTypes.AiLanguageModel, required: true, maxConnections: 1 },
				{ type: NodeConnectionTypes.AiTool },
			],
		}),
		async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			const tools = (await this.getInputConnectionData(NodeConnectionTypes.AiTool, 0)) as InvocableTool[];
			const results: INodeExecutionData[] = [];
			for (const call of calls) {
				const wanted = nodeNameToToolName(call.tool);
				const tool = tools.find((candidate) => candidate.name === wanted);
				if (!tool) throw new Error(`no tool "${wanted}" is connected (connected: ${tools.map((t) => t.name).join(', ')})`);
				const response = String(await tool.invoke(call.args));
				let parsed: unknown = response;
				try {
					parsed = JSON.parse(response);
				} catch {
					// a tool's error text
				}
				results.push({ json: { tool: call.tool, response: parsed } as IDataObject, pairedItem: { item: 0 } });
			}
			return [results];
		},
	};
}

/** Changes a copy of a node's description: how the tests mutate the code on purpose (a negative control). */
export type DescriptionMutation = (type: string, description: INodeTypeDescription) => void;

function mutated(type: string, nodeType: AnyNodeType, mutate: DescriptionMutation): AnyNodeType {
	if ('nodeVersions' in nodeType) throw new Error('a description mutation applies to a plain node type only');
	const copy = Object.create(nodeType) as INodeType;
	const description = deepCopy(nodeType.description);
	mutate(type, description);
	Object.defineProperty(copy, 'description', { value: description });
	return copy;
}

/** Every node type a fixture may name: ours (current code), their tool variants, and the stand-ins. */
export function fixtureNodeTypes(toolCalls: ToolCall[] = [], mutate?: DescriptionMutation): HarnessNodeTypes {
	const ours = packageNodeTypeEntries().map(({ type, nodeType }) => ({
		type,
		nodeType: mutate ? mutated(type, nodeType, mutate) : nodeType,
	}));
	const tools = ours
		.filter(({ nodeType }) => NodeHelpers.getVersionedNodeType(nodeType).description.usableAsTool)
		.map(({ type, nodeType }) => ({ type: `${type}Tool`, nodeType: toolVariant(nodeType) }));
	const foreign: AnyNodeType[] = [new ManualTriggerStandIn(), new NoOpStandIn(), new ChatModelStandIn(), agentStandIn(toolCalls)];
	return new HarnessNodeTypes([
		...ours,
		...tools,
		...foreign.map((nodeType) => ({ type: nodeType.description.name, nodeType })),
	]);
}

export const isOurs = (type: string): boolean => type.startsWith(PACKAGE_PREFIX);
