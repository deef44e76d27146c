import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, ITaskData } from 'n8n-workflow';

/*
 * Which run of the node a Retry replays: the ledger's `run_key` must name the crashed execution's run, whatever run
 * index n8n gives the Retry's.
 *
 * n8n's crash recovery (ExecutionRecoveryService.amend, 1.123 and 2.41 alike) writes one stand-in run for each node its
 * event log saw start and that has no saved run data: a node that finished gets a run whose only item is
 * `{ isArtificialRecoveredEventItem: true }`, a node cut off a crashed run (NodeCrashedError). A Retry keeps that run
 * data and runs the saved execution stack again, which in queue mode (and with progress not saved) is where the
 * execution began: every node the crashed run had finished runs again *after* its stand-in. So a Video node that had
 * sent its 20 items before the worker died is run 1 in the Retry, while its rows say run 0: the Retry found no row
 * of its own and paid all 20 again (found by bench:scale's queue case on a loaded machine, where the kill came just
 * after the node finished). The Retry's run replays the crashed execution's run `runIndex` minus the stand-ins
 * before it.
 */

/** How many of the node's runs before `runIndex` are stand-ins (one at most: recovery writes a node's run data once). */
function standInsBefore(runs: ITaskData[] | undefined, runIndex: number): number {
	return (runs ?? []).slice(0, runIndex).filter(isStandIn).length;
}

/**
 * The run of an execution's saved run data that replays run `replayedIndex` (a row's run index): the stand-ins are
 * skipped, so a Retry's own run is found where n8n saved it (run 1 after a stand-in), not the stand-in in its place.
 */
export function runReplaying(runs: ITaskData[] | undefined, replayedIndex: number): ITaskData | undefined {
	return (runs ?? []).filter((run) => !isStandIn(run))[replayedIndex];
}

/** A run n8n's crash recovery wrote in place of one it could not save. */
function isStandIn(run: ITaskData | undefined): boolean {
	if (!run) return false;
	if (run.executionStatus === 'crashed') return true;
	const items = (run.data?.main ?? []).flatMap((output) => output ?? []);
	return items.length === 1 && items[0]?.json?.isArtificialRecoveredEventItem === true;
}

/**
 * Stand-ins counted per execution (n8n's cancel signal: one per execution run, on both lines) and node. A stand-in
 * can only come before the execution's own first run of the node, and n8n may write one into the saved data of an
 * execution still running (a worker restarting amends every execution of an event log it shares, or of a job 1.x
 * re-ran elsewhere): counted again at a loop's next run, the Retry's own run 0 would count as one, and run 1 would
 * take run 0's rows (found by a helper session's review; test/unit/taskLedger.test.ts).
 */
const counted = new WeakMap<object, Map<string, number>>();

/**
 * This Retry's run of the node as the crashed execution numbered it. Reads the execution's saved run data (what the
 * Retry started from) only at its first run of the node with a run before it, once; a failed read fails the run, with
 * nothing sent: an unknown numbering could pay every item again.
 */
export async function retriedRunIndex(ctx: IExecuteFunctions, runIndex: number): Promise<number> {
	const node = ctx.getNode();
	const signal = ctx.getExecutionCancelSignal?.();
	let known = signal ? counted.get(signal) : undefined;
	if (signal && !known) counted.set(signal, (known = new Map()));
	const remembered = known?.get(node.name);
	if (remembered !== undefined) return runIndex - remembered;
	const standIns = runIndex === 0 ? 0 : await readStandIns(ctx, runIndex);
	known?.set(node.name, standIns);
	return runIndex - standIns;
}

async function readStandIns(ctx: IExecuteFunctions, runIndex: number): Promise<number> {
	const executionId = ctx.getExecutionId();
	const node = ctx.getNode();
	try {
		const saved = await ctx.getExecutionDataById(executionId);
		if (!saved) throw new Error(`execution ${executionId} was not found`);
		return standInsBefore(saved.resultData?.runData?.[node.name], runIndex);
	} catch (error) {
		throw new NodeOperationError(node, `Task Ledger: could not read this Retry's saved run data, so nothing was sent`, {
			description:
				`A Retry reads which run of "${node.name}" it replays (n8n's crash recovery adds stand-in runs before it) ` +
				`so that it adopts the tasks the crashed run paid for instead of paying again. Reading execution ` +
				`${executionId} failed: ${(error as Error)?.message ?? String(error)}. Retry the execution again.`,
		});
	}
}
