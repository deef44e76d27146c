import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { createGate } from '../../shared/concurrency';
import type { Gate } from '../../shared/concurrency';
import { errorItem } from '../../shared/items';
import { taskErrorDetails } from '../completion';

/**
 * Runs one task operation for every input item, all items at once with their requests passing through one gate of
 * `concurrency`; keeps input order and pairedItem, and applies Continue On Fail per item.
 */
export async function forEachItem(
	ctx: IExecuteFunctions,
	concurrency: number,
	work: (itemIndex: number, gate: Gate) => Promise<INodeExecutionData | INodeExecutionData[]>,
): Promise<INodeExecutionData[]> {
	const gate = createGate(concurrency);
	const outcomes = await Promise.all(
		ctx.getInputData().map(async (_, itemIndex) => {
			try {
				return { items: ([] as INodeExecutionData[]).concat(await work(itemIndex, gate)) };
			} catch (error) {
				return { error: error as Error };
			}
		}),
	);
	const cancelled = ctx.getExecutionCancelSignal()?.aborted;
	const out: INodeExecutionData[] = [];
	for (const [itemIndex, outcome] of outcomes.entries()) {
		if (outcome.items) {
			out.push(...outcome.items);
			continue;
		}
		if (cancelled || !ctx.continueOnFail()) throw outcome.error;
		out.push(errorItem(outcome.error, itemIndex, taskErrorDetails(outcome.error) as IDataObject));
	}
	return out;
}
