import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { Lane } from '../transport/lane';
import { runItems } from './runItems';
import type { RunPolicy } from './runItems';

/**
 * The one shape of an operation in every node, and the one router that runs it. The operation says what one item
 * does; the router owns the rest: the item loop, Continue On Fail, paired items, the lanes (concurrency gate) and the
 * submission guard's release (runItems.ts).
 */
export interface Operation<State = undefined> {
	properties: INodeProperties[];
	/**
	 * Once per execution, before any item runs: what all items share (run-wide options, Generate's report), and the
	 * place to refuse the whole run before anything is paid (Generate checks every item first).
	 */
	prepare?(ctx: IExecuteFunctions): State | Promise<State>;
	/** How the items run (one by one by default), which error fields an error item keeps, what the run fails with. */
	policy?(ctx: IExecuteFunctions, state: State): RunPolicy;
	/** One item: its output item(s), JSON or binary. Every request of the item goes in its lane. */
	run(
		ctx: IExecuteFunctions,
		itemIndex: number,
		lane: Lane,
		state: State,
	): Promise<INodeExecutionData | INodeExecutionData[]>;
	/** After the last item, also when the run fails: what the run holds is let go (Generate's task ledger). */
	close?(state: State): Promise<void>;
	/** The node's outputs, from all output items in input order (default: one output). Check has two. */
	route?(items: INodeExecutionData[], state: State): INodeExecutionData[][];
}

export type Operations = Record<string, Operation<unknown>>;

interface RouteOptions {
	/**
	 * Each item runs the operation its own `operation` parameter names (Chat, whose operations share no run-wide
	 * state); otherwise the first item's operation runs every item.
	 */
	operationPerItem?: boolean;
}

function operationOf(ctx: IExecuteFunctions, operations: Operations, itemIndex: number): Operation<unknown> {
	const name = ctx.getNodeParameter('operation', itemIndex) as string;
	const operation = Object.prototype.hasOwnProperty.call(operations, name) ? operations[name] : undefined;
	if (!operation) {
		throw new NodeOperationError(ctx.getNode(), `Unknown operation "${name}"`, itemIndex > 0 ? { itemIndex } : {});
	}
	return operation;
}

/**
 * The node's router: the first item's operation prepares the run, sets its policy and routes its outputs; the items
 * run through runItems (one loop for every node).
 */
export async function route(
	ctx: IExecuteFunctions,
	operations: Operations,
	options: RouteOptions = {},
): Promise<INodeExecutionData[][]> {
	const operation = operationOf(ctx, operations, 0);
	const state = await operation.prepare?.(ctx);
	let items: INodeExecutionData[];
	try {
		items = await runItems(
			ctx,
			async (itemIndex, lane) => {
				const own = options.operationPerItem ? operationOf(ctx, operations, itemIndex) : operation;
				return await own.run(ctx, itemIndex, lane, state);
			},
			operation.policy?.(ctx, state),
		);
	} finally {
		await operation.close?.(state);
	}
	return operation.route ? operation.route(items, state) : [items];
}
