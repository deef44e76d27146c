import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, ITaskData } from 'n8n-workflow';

/**
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
 * before it (only one per node: recovery writes a node's run data once).
 */
export function replayedRunIndex(runs: ITaskData[] | undefined, runIndex: number): number {
	const standIns = (runs ?? []).slice(0, runIndex).filter(isStandIn).length;
	return runIndex - standIns;
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
 * This Retry's run of the node as the crashed execution numbered it. Reads the execution's saved run data (what the
 * Retry started from) only when there is a run before this one to look at; a failed read fails the run, with nothing
 * sent: an unknown numbering could pay every item again.
 */
export async function retriedRunIndex(ctx: IExecuteFunctions, runIndex: number): Promise<number> {
	if (runIndex === 0) return 0;
	const executionId = ctx.getExecutionId();
	const node = ctx.getNode();
	try {
		const saved = await ctx.getExecutionDataById(executionId);
		if (!saved) throw new Error(`execution ${executionId} was not found`);
		return replayedRunIndex(saved.resultData?.runData?.[node.name], runIndex);
	} catch (error) {
		throw new NodeOperationError(node, `Task Ledger: could not read this Retry's saved run data, so nothing was sent`, {
			description:
				`A Retry reads which run of "${node.name}" it replays (n8n's crash recovery adds stand-in runs before it) ` +
				`so that it adopts the tasks the crashed run paid for instead of paying again. Reading execution ` +
				`${executionId} failed: ${(error as Error)?.message ?? String(error)}. Retry the execution again.`,
		});
	}
}
