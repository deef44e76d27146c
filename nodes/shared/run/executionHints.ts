import type { IExecuteFunctions } from 'n8n-workflow';

/** The warnings already shown for a node run (its execute context), so that one shows once however many items have it. */
const shown = new WeakMap<object, Set<string>>();

/**
 * A warning in the editor's output pane of this node run: n8n's execution hints (`this.addExecutionHints`, on the
 * execute context of n8n 1.123.81 and 2.41.1; n8n's HTTP Request node shows its pagination notice so), stored with the
 * run's data and shown above the output by the editors of both lines. Once per node run for each text. A host whose
 * context lacks the method shows nothing, as n8n's own nodes do there; the item's JSON carries the warning anyway.
 */
export function warnOnce(ctx: IExecuteFunctions, message: string): void {
	const add = (ctx as Partial<IExecuteFunctions>).addExecutionHints;
	if (typeof add !== 'function') return;
	const messages = shown.get(ctx) ?? new Set<string>();
	if (messages.has(message)) return;
	messages.add(message);
	shown.set(ctx, messages);
	add.call(ctx, { message, type: 'warning', location: 'outputPane' });
}
