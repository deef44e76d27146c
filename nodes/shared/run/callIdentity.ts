/**
 * Which call of a sub-node a paid request is, where n8n does not say which item of its root it serves: an AI tool's
 * calls (the agent's tool calls) and the Chat Model's (a chain's rows, an agent's steps). The rule
 * (docs/reliability.md, "The identity of a paid request"): a call asked is the same call only when it is the same call
 * retried; two calls asked are two requests, whatever they say.
 *
 * What tells them apart, on n8n-core 1.x and 2.x alike:
 * - One try of the root node (agent, chain): every context n8n makes for its sub-nodes during that try holds the
 *   try's own list of close functions (a new list per try, the same one for every sub-node and item), so its calls
 *   can be counted in the order they are asked, and a retry of the root (its Retry On Fail) counts from 0 again.
 * - One run of the root node: the execute data n8n hands the root's tries and its sub-nodes (the same object for every
 *   try of one run, a new one for the next run, e.g. a loop's next batch).
 */

/** The list n8n makes for one try of the root node; undefined where this n8n does not show it. */
function rootTry(ctx: object): object | undefined {
	const list = (ctx as { closeFunctions?: unknown }).closeFunctions;
	return Array.isArray(list) ? list : undefined;
}

const counts = new WeakMap<object, Map<string, number>>();

/**
 * How many calls named `what` this try of the root asked before this one (0 for the first): the n-th call named
 * `what` of a retry is the n-th of the try before. Undefined where the try cannot be told (then the caller keeps one
 * slot for them all: it may refuse a call, never send one twice).
 */
export function askedBefore(ctx: object, what: string): number | undefined {
	const key = rootTry(ctx);
	if (!key) return undefined;
	let asked = counts.get(key);
	if (!asked) {
		asked = new Map();
		counts.set(key, asked);
	}
	const before = asked.get(what) ?? 0;
	asked.set(what, before + 1);
	return before;
}

const runs = new WeakMap<object, number>();
let runsSeen = 0;

/** A name for this run of the root node, the same for all its tries ('' where this n8n does not show it). */
export function rootRun(ctx: { getExecuteData?: () => unknown }): string {
	let data: unknown;
	try {
		data = typeof ctx.getExecuteData === 'function' ? ctx.getExecuteData() : undefined;
	} catch {
		data = undefined;
	}
	if (!data || typeof data !== 'object') return '';
	let run = runs.get(data);
	if (run === undefined) {
		run = ++runsSeen;
		runs.set(data, run);
	}
	return `r${run}`;
}

const supplies = new WeakMap<object, number>();

/**
 * Called when n8n asks a sub-node for what it supplies (before any wait, so in the order the root asked): a chain asks
 * for its model once per row, so the n-th model of a try stands for the n-th row.
 */
export function noteSupply(ctx: object): void {
	const before = askedBefore(ctx, 'supply');
	if (before !== undefined) supplies.set(ctx, before);
}

/** Which supply of this try of the root a context is ('s' where not known). */
export const suppliedAs = (ctx: object): string => `s${supplies.get(ctx) ?? ''}`;
