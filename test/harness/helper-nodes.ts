import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes, jsonParse } from 'n8n-workflow';

/** Node types of the harness's own helper nodes. */
export const HARNESS_NODE_TYPES = {
	start: 'harness.start',
	items: 'harness.items',
	noOp: 'harness.noOp',
	pause: 'harness.pause',
} as const;

function helperDescription(name: string, displayName: string, extra: Partial<INodeTypeDescription> = {}) {
	const description: INodeTypeDescription = {
		displayName,
		name,
		group: ['transform'],
		version: 1,
		description: `Harness helper: ${displayName}`,
		defaults: { name: displayName },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
		...extra,
	};
	return description;
}

/** Where the chain starts, like a manual trigger: passes on the single empty item the harness puts on the stack. */
export class HarnessStart implements INodeType {
	description = helperDescription(HARNESS_NODE_TYPES.start, 'Start', { group: ['trigger'], inputs: [] });

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/** Emits the JSON items given in its `items` parameter (a JSON array), so tests can feed input to the first node. */
export class HarnessItems implements INodeType {
	description = helperDescription(HARNESS_NODE_TYPES.items, 'Items', {
		properties: [{ displayName: 'Items (JSON Array)', name: 'items', type: 'json', default: '[]' }],
	});

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const raw = this.getNodeParameter('items', 0) as string | unknown[];
		const items = typeof raw === 'string' ? jsonParse<unknown[]>(raw) : raw;
		// Every emitted item derives from the one item the start node passed on.
		return [items.map((json) => ({ json: json as INodeExecutionData['json'], pairedItem: { item: 0 } }))];
	}
}

/** Passes its input on unchanged. */
export class HarnessNoOp implements INodeType {
	description = helperDescription(HARNESS_NODE_TYPES.noOp, 'No Operation');

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/** Passes its input on after `ms` milliseconds (an execution that reaches the next node later). */
export class HarnessPause implements INodeType {
	description = helperDescription(HARNESS_NODE_TYPES.pause, 'Pause', {
		properties: [{ displayName: 'Milliseconds', name: 'ms', type: 'number', default: 0 }],
	});

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		await new Promise((resolve) => setTimeout(resolve, this.getNodeParameter('ms', 0) as number));
		return [this.getInputData()];
	}
}

export const HELPER_NODE_CLASSES = [HarnessStart, HarnessItems, HarnessNoOp, HarnessPause];
