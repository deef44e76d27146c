import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';

import { maySendAgain } from '../transport/retry';
import { askedBefore, rootRun } from './callIdentity';
import { fingerprint } from './fingerprint';
import { endScope, forget, forgetScope as forgetRun, keptError, recall, remember } from './guardMemory';
import type { GuardEntry } from './guardMemory';

/**
 * The one guard every paid POST of the package goes through (video submit, chat completion, response, image
 * generation), so that n8n's "Retry On Fail" (which re-runs the node in the same execution and process) never pays
 * twice: a request that was accepted is not sent again, its result is reused; a request whose outcome is unknown is
 * not sent again either.
 *
 * A retry and a new run of the node are told apart by n8n's run index: the tries of one run share it, while a node
 * that runs again in the same execution (Loop Over Items, a second batch) gets the next one and submits afresh.
 *
 * A paid request is known by where it comes from, never by what it says: execution, node, run index, item and which
 * paid call of the item it is. Each try evaluates the parameters again, and a body holding `{{ $now }}` differs on
 * every try: keyed by the body, Retry On Fail would pay again (docs/reliability.md, "The identity of a paid request").
 *
 * A process-level memory (guardMemory.ts, bounded in time, count and bytes): workflow static data would be persisted
 * with the workflow, and a retry always runs in the process that ran the first try (also on a queue-mode worker).
 * Entries of a run that finished cleanly, or failed on a node without Retry On Fail, are dropped at once; entries of
 * one that failed where a retry may come expire after ENTRY_TTL_MS.
 */

export interface GuardScope {
	executionId: string;
	nodeName: string;
	/** n8n's run index of the node in this execution: equal for the tries of one run, new for a loop's next run. */
	runIndex: number;
}

/** The run index n8n gives this run of the node (the `$runIndex` of expressions); 0 where it cannot be read. */
export function runIndexOf(ctx: IExecuteFunctions): number {
	try {
		const value = ctx.getWorkflowDataProxy(0).$runIndex as unknown;
		return typeof value === 'number' && Number.isInteger(value) ? value : 0;
	} catch {
		return 0;
	}
}

const scopes = new WeakMap<IExecuteFunctions, GuardScope>();

/** Whether n8n runs this node as an AI agent's tool (createNodeAsTool: 2.x says so; 1.x only by the connection type). */
function asTool(ctx: IExecuteFunctions): boolean {
	const tool = ctx as { isToolExecution?: () => boolean; connectionType?: unknown };
	return typeof tool.isToolExecution === 'function' ? tool.isToolExecution() : tool.connectionType === 'ai_tool';
}

/** The agent (root node) a tool or model serves: 2.x's supply context names it; both lines hand it its execute data. */
export function rootNodeOf(ctx: IExecuteFunctions): INode | undefined {
	const parent = (ctx as { parentNode?: INode }).parentNode;
	if (parent?.name) return parent;
	try {
		return (ctx.getExecuteData() as { node?: INode } | undefined)?.node;
	} catch {
		return undefined;
	}
}

/** The call each arguments object stands for: n8n hands every Retry On Fail try of one tool call the same object. */
const toolCalls = new WeakMap<object, string>();

/**
 * Called as an AI agent's tool, n8n gives every try of the node a new run index (and a new context), so the run index
 * cannot tell a retry from a new call. A tool call is the agent's run and which call it is: the arguments object n8n
 * hands every try of one call (its Retry On Fail), or else the call's place among the calls with the same arguments
 * in this try of the agent (callIdentity.ts), so that two calls in one step are two requests and the agent's own
 * retry (its Retry On Fail) asks the same calls again.
 */
function toolScope(ctx: IExecuteFunctions, executionId: string): GuardScope | undefined {
	if (!asTool(ctx)) return undefined;
	const node = ctx.getNode().name;
	const agent = rootNodeOf(ctx)?.name ?? '';
	const items = ctx.getInputData();
	const args = fingerprint(JSON.stringify(items.map((item) => item.json)));
	const object = items[0]?.json;
	let call = object ? toolCalls.get(object) : undefined;
	if (call === undefined) {
		call = `${args}\u0000${askedBefore(ctx, `tool\u0000${node}\u0000${args}`) ?? 0}`;
		if (object) toolCalls.set(object, call);
	}
	return { executionId, nodeName: `${node}\u0000tool\u0000${agent}\u0000${rootRun(ctx)}\u0000${call}`, runIndex: 0 };
}

/** The scope of this run of the node (read once per run: n8n gives every try a new context). */
export function guardScope(ctx: IExecuteFunctions): GuardScope {
	let scope = scopes.get(ctx);
	if (!scope) {
		const executionId = ctx.getExecutionId() ?? 'manual';
		scope = toolScope(ctx, executionId) ?? { executionId, nodeName: ctx.getNode().name, runIndex: runIndexOf(ctx) };
		scopes.set(ctx, scope);
	}
	return scope;
}

/** One run of one node, as the guard's memory names it. */
export const runName = (scope: GuardScope) => `${scope.executionId}\u0000${scope.nodeName}\u0000${scope.runIndex}`;

/** Where one paid call of an item in one run of a node is remembered: `call` names which ("POST /v1/tasks/vendor"). */
export interface GuardSlot {
	run: string;
	key: string;
}

export function guardSlot(scope: GuardScope, itemIndex: number, call: string): GuardSlot {
	return { run: runName(scope), key: `${itemIndex}\u0000${call}` };
}

/** Drops everything of one run of a node: no retry can come for it. */
export function forgetScope(scope: GuardScope): void {
	forgetRun(runName(scope));
}

interface GuardedRequest<T> {
	itemIndex: number;
	/** Sends the paid request once; resolves with what must be reused on a retry. */
	send: () => Promise<T>;
	/** The item's paid call, its key and the message's words: "POST /v1/chat/completions". */
	what: string;
	/** What is paid for, in the advice: "video" (default "work"). */
	noun?: string;
	/** Defaults to the scope of this run of the node. */
	scope?: GuardScope;
}

interface GuardedResult<T> {
	value: T;
	/** True when an earlier try of this run had it accepted and nothing was sent now. */
	resumed: boolean;
	/** When the service accepted it (the earlier try's time on a resume). */
	acceptedAt: number;
}

/**
 * A retry of an item whose earlier try had an unknown outcome, or was accepted and its answer since let go (the
 * memory's bound): nothing is sent; the earlier error's details stay.
 */
function notResubmitted<T>(
	ctx: IExecuteFunctions,
	guarded: GuardedRequest<T>,
	earlier: GuardEntry,
): NodeOperationError {
	const first = earlier.state === 'unknown' ? earlier.error : undefined;
	const noun = guarded.noun ?? 'work';
	const message = earlier.state === 'dropped'
		? `Not resubmitted: an earlier try of this item in this execution was accepted (${guarded.what}), and its ` +
			'answer is no longer kept for a retry. The service has the work and charged for it.'
		: `Not resubmitted: an earlier try of this item in this execution had an unknown outcome ` +
			`(${first?.message ?? guarded.what}). The service may already have the work and charge for it.`;
	const error = new NodeOperationError(ctx.getNode(), message, {
		itemIndex: guarded.itemIndex,
		description: `Check with the service (its task list or your usage) whether the ${noun} was ` +
			`created before you run it again; resubmitting blindly can pay for the same ${noun} twice.`,
	});
	// n8n swaps a message naming a network code (ECONNRESET…) for a generic "you can retry": exactly wrong here.
	error.message = message;
	if (first?.context) Object.assign(error.context, first.context);
	return error;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Sends a paid request at most once per execution, node run and item, whatever its body evaluates to on a retry: an
 * accepted result is reused, and an unknown outcome is never resent.
 */
export async function submitOnce<T>(ctx: IExecuteFunctions, guarded: GuardedRequest<T>): Promise<GuardedResult<T>> {
	const { itemIndex } = guarded;
	const { run, key } = guardSlot(guarded.scope ?? guardScope(ctx), itemIndex, guarded.what);
	const earlier = recall(run, key);
	if (earlier?.state === 'accepted') return { value: earlier.value as T, resumed: true, acceptedAt: earlier.at };
	if (earlier) throw notResubmitted(ctx, guarded, earlier);
	remember(run, key, { state: 'sending', at: Date.now() });
	let outcome: Outcome<T>;
	try {
		outcome = { ok: true, value: await guarded.send() };
	} catch (error) {
		outcome = { ok: false, error };
	}
	if (!outcome.ok) {
		if (maySendAgain(outcome.error)) forget(run, key);
		else remember(run, key, { state: 'unknown', error: keptError(outcome.error), at: Date.now() });
		throw outcome.error;
	}
	const acceptedAt = Date.now();
	remember(run, key, { state: 'accepted', value: outcome.value, at: acceptedAt });
	return { value: outcome.value, resumed: false, acceptedAt };
}

/**
 * When this run of the node first reached `what` for an item, kept across Retry On Fail tries (as accepted work is):
 * e.g. when it began waiting for a task, so that a retry waits only what is left of the maximum wait.
 */
export function firstSeen(ctx: IExecuteFunctions, itemIndex: number, what: string, now: number = Date.now()): number {
	const { run, key } = guardSlot(guardScope(ctx), itemIndex, `first seen: ${what}`);
	const earlier = recall(run, key, now);
	if (earlier?.state === 'accepted' && typeof earlier.value === 'number') return earlier.value;
	remember(run, key, { state: 'accepted', value: now, at: now });
	return now;
}

/** A tool whose agent has Retry On Fail: the agent's retry asks the same calls again, answered or not. */
const agentMayRetry = (ctx: IExecuteFunctions) => asTool(ctx) && rootNodeOf(ctx)?.retryOnFail === true;

/** Whether n8n may run this node again in this execution for the same run (its Retry On Fail setting, or its agent's). */
const mayBeRetried = (ctx: IExecuteFunctions) => ctx.getNode().retryOnFail === true || agentMayRetry(ctx);

/**
 * Called when a node's run ended with output: with no error item no retry can come, so its memory goes. n8n's Retry
 * On Fail also re-runs a node whose first output item holds `json.error` (Continue On Fail), and an agent with Retry
 * On Fail asks its tools' calls again: the memory is kept then, so the retry reuses accepted work, and expires
 * ENTRY_TTL_MS after this end (guardMemory.ts).
 */
export function releaseSubmissions(ctx: IExecuteFunctions, output: INodeExecutionData[], scope?: GuardScope): void {
	const run = scope ?? guardScope(ctx);
	const failedItem = output.some((item) => item.json.error !== undefined);
	if (agentMayRetry(ctx) || (mayBeRetried(ctx) && failedItem)) endScope(runName(run));
	else forgetScope(run);
}

/** Called when a node's run failed: kept for a retry (Retry On Fail), else nothing can reuse it and it goes at once. */
export function releaseFailedRun(ctx: IExecuteFunctions): void {
	if (mayBeRetried(ctx)) endScope(runName(guardScope(ctx)));
	else forgetScope(guardScope(ctx));
}
