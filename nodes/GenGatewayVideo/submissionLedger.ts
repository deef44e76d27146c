/**
 * Memory of paid submissions within one execution, so that n8n's "Retry On Fail" (which re-runs the node in the same
 * execution and process) never pays twice: an item whose task was accepted resumes waiting on that task_id, and an
 * item whose submission had an unknown outcome is not sent again.
 *
 * A process-level map keyed by execution, node, item and request: workflow static data would be persisted with the
 * workflow, and a retry always runs in the process that ran the first try (also on a queue-mode worker). Entries of a
 * node that finished are dropped at once; entries of one that failed for good expire after ENTRY_TTL_MS.
 */

export type LedgerEntry =
	| { state: 'sending'; at: number }
	| { state: 'accepted'; taskId: string; at: number }
	| { state: 'unknown'; reason: string; at: number };

/** Longer than the longest wait (30 min) plus n8n's longest retry pause (5 min). */
export const ENTRY_TTL_MS = 60 * 60 * 1000;

const entries = new Map<string, LedgerEntry>();

/** FNV-1a: a short fingerprint of the request, so a changed request is never mistaken for the earlier one. */
export function fingerprint(text: string): string {
	let hash = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		hash ^= text.charCodeAt(i);
		hash = Math.imul(hash, 0x01000193);
	}
	return (hash >>> 0).toString(16).padStart(8, '0');
}

export interface LedgerScope {
	executionId: string;
	nodeName: string;
}

const scopePrefix = (scope: LedgerScope) => `${scope.executionId}\u0000${scope.nodeName}\u0000`;

export function ledgerKey(scope: LedgerScope, itemIndex: number, request: unknown): string {
	return `${scopePrefix(scope)}${itemIndex}\u0000${fingerprint(JSON.stringify(request))}`;
}

function sweep(now: number): void {
	for (const [key, entry] of entries) if (now - entry.at > ENTRY_TTL_MS) entries.delete(key);
}

export function recall(key: string, now: number = Date.now()): LedgerEntry | undefined {
	sweep(now);
	return entries.get(key);
}

export function remember(key: string, entry: LedgerEntry): void {
	entries.set(key, entry);
}

export function forget(key: string): void {
	entries.delete(key);
}

/** Called when the node finished: no retry can come, so nothing of this execution's node is kept. */
export function forgetScope(scope: LedgerScope): void {
	const prefix = scopePrefix(scope);
	for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
}

export function ledgerSize(): number {
	return entries.size;
}
