import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { createGate } from './concurrency';
import type { Gate } from './concurrency';
import type { Lane } from '../transport/lane';
import { errorItem } from './errorItem';
import { releaseFailedRun, releaseSubmissions } from './submissionGuard';

/**
 * The one item loop of every node (called by its router, router.ts): runs `work` for each input item in its lane,
 * keeps input order and pairedItem, applies Continue On Fail per item and, when the run ends, releases the submission
 * guard's memory of it (all of it, unless a retry may come: submissionGuard.ts).
 */

type ItemWork = (itemIndex: number, lane: Lane) => Promise<INodeExecutionData | INodeExecutionData[]>;

export interface RunPolicy {
	/**
	 * Unset: one item after another, and the first failure (without Continue On Fail) stops the rest. A number: all
	 * items at once, their requests through one gate of that size; a failure is thrown once every item has settled.
	 */
	concurrency?: number;
	/** Fields of a failed item's error context that its error item keeps (e.g. the task id, the partial answer). */
	errorFields?: readonly string[];
	/** The error the run fails with, made from an item's failure (default: the failure as it came). */
	failure?: (error: unknown, itemIndex: number) => unknown;
}

function errorFieldsOf(error: unknown, fields: readonly string[] = []): IDataObject {
	const context = (error as { context?: IDataObject }).context ?? {};
	const kept: IDataObject = {};
	for (const key of fields) if (context[key] !== undefined) kept[key] = context[key];
	return kept;
}

type Outcome = { items: INodeExecutionData[] } | { error: unknown };

async function settle(work: ItemWork, itemIndex: number, gate: Gate): Promise<Outcome> {
	try {
		return {
			items: ([] as INodeExecutionData[]).concat(await work(itemIndex, { itemIndex, gate })),
		};
	} catch (error) {
		return { error };
	}
}

export async function runItems(
	ctx: IExecuteFunctions,
	work: ItemWork,
	policy: RunPolicy = {},
): Promise<INodeExecutionData[]> {
	let out: INodeExecutionData[] | undefined;
	try {
		out = await collect(ctx, work, policy);
	} finally {
		if (out) releaseSubmissions(ctx, out);
		else releaseFailedRun(ctx);
	}
	return out;
}

async function collect(ctx: IExecuteFunctions, work: ItemWork, policy: RunPolicy): Promise<INodeExecutionData[]> {
	const fail = policy.failure ?? ((error: unknown) => error);
	const out: INodeExecutionData[] = [];
	const count = ctx.getInputData().length;
	const onFailure = (error: unknown, itemIndex: number) => {
		if (!ctx.continueOnFail()) throw fail(error, itemIndex);
		out.push(errorItem(error, itemIndex, errorFieldsOf(error, policy.errorFields)));
	};
	if (policy.concurrency === undefined) {
		const gate = createGate(1);
		for (let itemIndex = 0; itemIndex < count; itemIndex++) {
			const outcome = await settle(work, itemIndex, gate);
			if ('items' in outcome) out.push(...outcome.items);
			else onFailure(outcome.error, itemIndex);
		}
	} else {
		const gate = createGate(policy.concurrency);
		const outcomes = await Promise.all(Array.from({ length: count }, async (_, i) => await settle(work, i, gate)));
		const cancelled = ctx.getExecutionCancelSignal()?.aborted;
		for (const [itemIndex, outcome] of outcomes.entries()) {
			if ('items' in outcome) out.push(...outcome.items);
			else if (cancelled) throw fail(outcome.error, itemIndex);
			else onFailure(outcome.error, itemIndex);
		}
	}
	return out;
}
