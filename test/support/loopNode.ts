import { NodeConnectionTypes } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

/**
 * A test-only "Loop Over Items": output 0 gives the next batch (wire the loop body to it and back with `loopBackTo`),
 * output 1 everything the body returned once no batch is left. Its state lives in the node context, as n8n's
 * SplitInBatches keeps it, so the body node runs once per batch in one execution (run index 0, 1, …).
 */
export class TestLoop implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Loop',
		name: 'testLoop',
		group: ['transform'],
		version: 1,
		description: 'Test-only loop over items in batches',
		defaults: { name: 'Loop' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main],
		properties: [{ displayName: 'Batch Size', name: 'batchSize', type: 'number', default: 1 }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const state = this.getContext('node') as IDataObject & { queue?: IDataObject[]; done?: IDataObject[] };
		const input = this.getInputData().map((item) => item.json);
		if (state.queue === undefined) {
			state.queue = input;
			state.done = [];
		} else {
			state.done!.push(...input);
		}
		const size = this.getNodeParameter('batchSize', 0) as number;
		if (state.queue.length === 0) return [[], state.done!.map((json) => ({ json }))];
		return [state.queue.splice(0, size).map((json) => ({ json })), []];
	}
}
