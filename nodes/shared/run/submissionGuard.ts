import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { maySendAgain } from '../transport/retry';

/**
 * The one guard every paid POST of the package goes through (video submit, chat completion, response, image
 * generation), so that n8n's "Retry On Fail" (which re-runs the node in the same execution and process) never pays
 * twice: a request that was accepted is not sent again, its result is reused; a request whose outcome is unknown is
 * not sent again either.
 *
 * A retry and a new run of the node are told apart by n8n's run index: the tries of one run share it, while a node
 * that runs again in the same execution (Loop Over Items, a second batch) gets the next one and submits afresh.
 *
 * A process-level map keyed by execution, node, run, item and request: workflow static data would be persisted with
 * the workflow, and a retry always runs in the process that ran the first try (also on a queue-mode worker). Entries
 * of a run that finished cleanly are dropped at once; entries of one that failed for good expire after ENTRY_TTL_MS.
 */

type GuardEntry =
	| { state: 'sending'; at: number }
	| { state: 'accepted'; value: unknown; at: number }
	| { state: 'unknown'; error: unknown; at: number };

/** Longer than the longest wait (30 min) plus n8n's longest retry pause (5 min). */
export const ENTRY_TTL_MS = 60 * 60 * 1000;

const entries = new Map<string, GuardEntry>();

/** FNV-1a with two seeds (64 bits): a short fingerprint, so a changed request is never mistaken for the earlier one. */
export function fingerprint(text: string): string {
	let a = 0x811c9dc5;
	let b = 0x01000193 ^ text.length;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		a = Math.imul(a ^ code, 0x01000193);
		b = Math.imul(b ^ code, 0x5bd1e995);
	}
	return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

export interface GuardScope {
	executionId: string;
	nodeName: string;
	/** n8n's run index of the node in this execution: equal for the tries of one run, new for a loop's next run. */
	runIndex: number;
}

/** The run index n8n gives this run of the node (the `$runIndex` of expressions); 0 where it cannot be read. */
function runIndexOf(ctx: IExecuteFunctions): number {
	try {
		const value = ctx.getWorkflowDataProxy(0).$runIndex as unknown;
		return typeof value === 'number' && Number.isInteger(value) ? value : 0;
	} catch {
		return 0;
	}
}

const scopes = new WeakMap<IExecuteFunctions, GuardScope>();

/** The scope of this run of the node (read once per run: n8n gives every try a new context). */
export function guardScope(ctx: IExecuteFunctions): GuardScope {
	let scope = scopes.get(ctx);
	if (!scope) {
		scope = { executionId: ctx.getExecutionId() ?? 'manual', nodeName: ctx.getNode().name, runIndex: runIndexOf(ctx) };
		scopes.set(ctx, scope);
	}
	return scope;
}

const scopePrefix = (scope: GuardScope) => `${scope.executionId}\u0000${scope.nodeName}\u0000${scope.runIndex}\u0000`;

export function guardKey(scope: GuardScope, itemIndex: number, request: unknown): string {
	return `${scopePrefix(scope)}${itemIndex}\u0000${fingerprint(JSON.stringify(request) ?? '')}`;
}

function sweep(now: number): void {
	for (const [key, entry] of entries) if (now - entry.at > ENTRY_TTL_MS) entries.delete(key);
}

export function recall(key: string, now: number = Date.now()): GuardEntry | undefined {
	sweep(now);
	return entries.get(key);
}

export function remember(key: string, entry: GuardEntry): void {
	entries.set(key, entry);
}

function forget(key: string): void {
	entries.delete(key);
}

/** Drops everything of one run of a node: no retry can come for it. */
export function forgetScope(scope: GuardScope): void {
	const prefix = scopePrefix(scope);
	for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
}

export function guardSize(): number {
	return entries.size;
}

interface GuardedRequest<T> {
	itemIndex: number;
	/** What is paid for (the request body): a changed request is a new submission. */
	request: unknown;
	/** Sends the paid request once; resolves with what must be reused on a retry. */
	send: () => Promise<T>;
	/** For the message: "POST /v1/chat/completions". */
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

/** A retry of an item whose earlier try had an unknown outcome: nothing is sent; the earlier error's details stay. */
function notResubmitted<T>(
	ctx: IExecuteFunctions,
	guarded: GuardedRequest<T>,
	earlier: GuardEntry,
): NodeOperationError {
	const first = (earlier.state === 'unknown' ? earlier.error : undefined) as
		| { message?: string; context?: Record<string, unknown> }
		| undefined;
	const message = `Not resubmitted: an earlier try of this item in this execution had an unknown outcome ` +
		`(${first?.message ?? guarded.what}). The service may already have the work and charge for it.`;
	const error = new NodeOperationError(ctx.getNode(), message, {
		itemIndex: guarded.itemIndex,
		description: `Check with the service (its task list or your usage) whether the ${guarded.noun ?? 'work'} was ` +
			`created before you run it again; resubmitting blindly can pay for the same ${guarded.noun ?? 'work'} twice.`,
	});
	// n8n swaps a message naming a network code (ECONNRESET…) for a generic "you can retry": exactly wrong here.
	error.message = message;
	if (first?.context) Object.assign(error.context, first.context);
	return error;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Sends a paid request at most once per execution, node run, item and request: an accepted result is reused on a
 * retry, and an unknown outcome is never resent.
 */
export async function submitOnce<T>(ctx: IExecuteFunctions, guarded: GuardedRequest<T>): Promise<GuardedResult<T>> {
	const { itemIndex } = guarded;
	const key = guardKey(guarded.scope ?? guardScope(ctx), itemIndex, guarded.request);
	const earlier = recall(key);
	if (earlier?.state === 'accepted') return { value: earlier.value as T, resumed: true, acceptedAt: earlier.at };
	if (earlier) throw notResubmitted(ctx, guarded, earlier);
	remember(key, { state: 'sending', at: Date.now() });
	let outcome: Outcome<T>;
	try {
		outcome = { ok: true, value: await guarded.send() };
	} catch (error) {
		outcome = { ok: false, error };
	}
	if (!outcome.ok) {
		if (maySendAgain(outcome.error)) forget(key);
		else remember(key, { state: 'unknown', error: outcome.error, at: Date.now() });
		throw outcome.error;
	}
	const acceptedAt = Date.now();
	remember(key, { state: 'accepted', value: outcome.value, at: acceptedAt });
	return { value: outcome.value, resumed: false, acceptedAt };
}

/**
 * When this run of the node first reached `what` for an item, kept across Retry On Fail tries (as accepted work is):
 * e.g. when it began waiting for a task, so that a retry waits only what is left of the maximum wait.
 */
export function firstSeen(ctx: IExecuteFunctions, itemIndex: number, what: unknown, now: number = Date.now()): number {
	const key = guardKey(guardScope(ctx), itemIndex, { firstSeen: what });
	const earlier = recall(key, now);
	if (earlier?.state === 'accepted' && typeof earlier.value === 'number') return earlier.value;
	remember(key, { state: 'accepted', value: now, at: now });
	return now;
}

/**
 * Called when a node's run ended with output: with no error item no retry can come, so its memory goes. n8n's Retry
 * On Fail also re-runs a node whose first output item holds `json.error` (Continue On Fail): the memory is kept then,
 * so the retry reuses accepted work; it expires on its own.
 */
export function releaseSubmissions(ctx: IExecuteFunctions, output: INodeExecutionData[], scope?: GuardScope): void {
	if (output.some((item) => item.json.error !== undefined)) return;
	forgetScope(scope ?? guardScope(ctx));
}
