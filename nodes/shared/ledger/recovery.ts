import type { IDataObject, IExecuteFunctions, IRunExecutionData } from 'n8n-workflow';

import { BY_CLAIM, detailOf, eq, inFlight, LedgerTable, sentAfter } from './ledgerTable';
import type { LedgerRow } from './ledgerTable';
import { handedOn } from './taskLedger';

/**
 * Recover: the paid tasks of a workflow that no run took to the end. A row is recoverable when its holder is gone
 * (lease over) and it is `accepted` by a node run whose output never handed its task on (not saved, saved as failed,
 * or its item failed), or in flight (`sending`, or `planned` and named as sent after another row: the holder died
 * while submitting, an unknown outcome, listed apart and never resubmitted). Each is claimed by compare-and-set, so
 * two Recover runs, or a Recover and a Retry, never both take it; a claimed task is `recovered`, an unknown outcome
 * `reported`.
 */

interface Recovered {
	tasks: IDataObject[];
	unknownOutcomes: IDataObject[];
}

function itemOf(row: LedgerRow, tableId: string): IDataObject {
	const detail = detailOf(row);
	return {
		task_id: row.task_id || undefined,
		submitted_at: detail.submitted_at,
		model: detail.model,
		prompt: detail.prompt,
		workflow_id: row.workflow_id,
		execution_id: row.execution_id,
		node_name: detail.node_name,
		item_index: detail.item_index,
		ledger_table: tableId,
		ledger_row: row.id,
	};
}

export async function recoverTasks(
	ctx: IExecuteFunctions,
	tableId: string,
	workflowId: string,
	now: number = Date.now(),
): Promise<Recovered> {
	const table = new LedgerTable(ctx, tableId);
	const rows = await table.read([eq('workflow_id')], { workflow_id: workflowId });
	const recovered: Recovered = { tasks: [], unknownOutcomes: [] };
	const executionId = ctx.getExecutionId() ?? 'manual';
	const reads = new Map<string, Promise<IRunExecutionData | undefined>>();
	const named = sentAfter(rows);
	const taken: Array<{ row: LedgerRow; known: boolean }> = [];
	for (const row of rows) {
		const unknown = inFlight(row, named);
		if ((row.state !== 'accepted' && !unknown) || row.lease_until > now) continue;
		if (await handedOn(ctx, row, reads)) continue;
		taken.push({ row, known: !unknown && row.task_id !== '' });
	}
	// Every claim in one write (one sub-workflow run), each a compare-and-set of its own row.
	const claims = await table.updateEach(
		BY_CLAIM,
		taken.map(({ row, known }) => ({
			where: { id: row.id, claims: row.claims },
			set: { execution_id: executionId, claims: row.claims + 1, state: known ? 'recovered' : 'reported', lease_until: 0 },
		})),
	);
	taken.forEach(({ row, known }, index) => {
		// Lost to a concurrent Recover or Retry: theirs now.
		if (claims[index].length === 0) return;
		(known ? recovered.tasks : recovered.unknownOutcomes).push(itemOf(row, tableId));
	});
	return recovered;
}
