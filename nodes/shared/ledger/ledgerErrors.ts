import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import type { LedgerRow } from './ledgerTable';

/**
 * The context flag of a ledger error that concerns its item only: the run's other items are paid for and recorded as
 * usual (nothing of theirs is lost: Recover lists what a failing run did not hand on), instead of stopping at it.
 */
export const LEDGER_ITEM_ONLY = 'ledgerItemOnly';

function itemOnly(error: NodeOperationError): NodeOperationError {
	error.context[LEDGER_ITEM_ONLY] = true;
	return error;
}

/** The error of an item whose earlier try may have been paid (a `sending` row): never sent again. */
export function unknownOutcome(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(
		new NodeOperationError(
			ctx.getNode(),
			`Not resubmitted: an earlier run of this item (execution ${row.execution_id}) stopped while its video was ` +
				'being submitted, so the service may already have the task and charge for it.',
			{
				itemIndex,
				description:
					`Task Ledger row ${row.id} was marked as sent and has no task id. Check with the service (its task ` +
					'list or your usage) ' +
					'whether the video was created; to pay for it again, set the row\'s state to "refused" and retry.',
			},
		),
	);
}

/** Another live run holds the task this item paid for earlier: paying now could pay twice. */
export function takenByAnother(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(
		new NodeOperationError(
			ctx.getNode(),
			'Not submitted: another run that is still going (a second Retry of the same execution?) took over the task ' +
				`this item paid for earlier (Task Ledger row ${row.id}).`,
			{
				itemIndex,
				description:
					'Nothing was sent, so nothing was paid twice. Let the other run finish, or use Recover once no run holds ' +
					'the task any more.',
			},
		),
	);
}

/**
 * On a Retry, another run took over this item's task after this run had read its row, and handed it on (a Retry of
 * this run, started while it stalled, or another execution's Retry): paying now could pay twice.
 */
export function handedOnByAnother(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(
		new NodeOperationError(
			ctx.getNode(),
			`Not submitted: another run (execution ${row.execution_id}) took over and handed on the task of this item ` +
				`(Task Ledger row ${row.id}${row.task_id ? `, task ${row.task_id}` : ''}) while this run went on.`,
			{
				itemIndex,
				description:
					'Nothing was sent, so nothing was paid twice. If that run was a Retry of this one (n8n took this run for ' +
					'crashed while it stalled), its output has the video. Otherwise run the workflow anew to pay for this item.',
			},
		),
	);
}

/**
 * On a Retry, the crashed run paid at this item's position for another request (its input came in another order, or
 * the prompt changed): neither paid again nor handed the other request's video.
 */
export function anotherRequest(
	ctx: IExecuteFunctions,
	itemIndex: number,
	row: LedgerRow,
	paid: { model: string; prompt: string },
): NodeOperationError {
	const error = new NodeOperationError(
		ctx.getNode(),
		`Not submitted: the run this Retry takes over (execution ${row.execution_id}) paid at item ${itemIndex} for ` +
			`another request (model ${paid.model}, prompt "${paid.prompt.slice(0, 80)}")` +
			(row.task_id ? `, task ${row.task_id}.` : '.'),
		{
			itemIndex,
			description:
				"Nothing was sent, and that task is not given to this item: it may be another item's video. The Recover " +
				'operation lists it (with its prompt) for Wait for Completion. To pay for this item\'s prompt, run the ' +
				'workflow again rather than Retry.',
		},
	);
	if (row.task_id) error.context.task_id = row.task_id;
	return itemOnly(error);
}

/** On a Retry: another execution planned this item, still renews its lease, and may send it yet. */
export function stillHeld(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(
		new NodeOperationError(
			ctx.getNode(),
			`Not submitted: another run that is still going (execution ${row.execution_id}) holds this item and may ` +
				`still send it (Task Ledger row ${row.id}).`,
			{
				itemIndex,
				description:
					'Nothing was sent, so nothing can be paid twice. Retry again once that run has ended: what it paid for is ' +
					'then taken over, and what it never sent is paid once.',
			},
		),
	);
}

/** The run's hold on the item ran out (no renewal reached the table for a whole lease): another run may have it now. */
export function leaseLost(ctx: IExecuteFunctions, itemIndex: number, row: LedgerRow): NodeOperationError {
	return itemOnly(
		new NodeOperationError(
			ctx.getNode(),
			`Not sent: this run's hold on the item in the Task Ledger (row ${row.id}) ran out before its request went ` +
				'out (its renewals did not reach the table, or n8n stalled), so a Retry may have taken the item over.',
			{
				itemIndex,
				description:
					'Nothing was sent. Once this run has ended, Retry it (or use Recover): each task is then paid at most once.',
			},
		),
	);
}

/**
 * The run's hold on its rows ran out while it went on (no renewal reached the table for a whole lease): a Retry or
 * Recover may have taken its tasks over, so none of its items may go on with them (the node run fails).
 */
export function holdRanOut(ctx: IExecuteFunctions): NodeOperationError {
	return new NodeOperationError(
		ctx.getNode(),
		"Task Ledger: this run's hold on its tasks ran out (its lease renewals did not reach the table in time, or n8n " +
			'stalled), so another run may have taken them over: none of them goes on from this run.',
		{
			itemIndex: 0,
			description:
				'Nothing was paid twice. Retry this execution (or use Recover): every task it paid for is taken over, none ' +
				'paid again.',
		},
	);
}
