/**
 * The submission guard's memory (submissionGuard.ts): what a retry of a paid request needs, per run of a node (its
 * scope) and key, in this process, bounded in time, count and bytes.
 *
 * A run that is still going is never touched: its entries are what stops its own items from paying twice. Bounds act
 * on runs that ended where a retry may still come (`endScope`), oldest ended first:
 * - time: ENTRY_TTL_MS after the run ended (a run never ended, such as the Chat Model's calls, which have no end of
 *   their own: LIVE_TTL_MS after its last write);
 * - bytes: their large answers are let go (an accepted answer becomes `dropped`: known as paid, never sent again, no
 *   longer reusable; an unknown outcome keeps its message and small details); small entries (a video's task id and
 *   request) are always kept whole;
 * - count: their oldest runs go whole.
 * Every write sweeps (not only a later lookup: a process that stops paying would otherwise keep it all).
 */

/** What a failed try's error leaves for the retry's "Not resubmitted" error: its message and details. */
interface KeptError {
	message?: string;
	context?: Record<string, unknown>;
}

export type GuardEntry =
	| { state: 'sending'; at: number }
	| { state: 'accepted'; value: unknown; at: number }
	/** Accepted, its answer let go to keep the memory bounded: a retry is refused, never sent again. */
	| { state: 'dropped'; at: number }
	| { state: 'unknown'; error: KeptError; at: number };

/** After a run ended: longer than the longest wait (30 min) plus n8n's longest retry pause (5 min). */
export const ENTRY_TTL_MS = 60 * 60 * 1000;
/** A run that never said it ended, after its last write. */
export const LIVE_TTL_MS = 6 * 60 * 60 * 1000;
/** Answers and error details kept for retries of ended runs, in all (about: strings count by their length). */
export const MAX_KEPT_BYTES = 64 * 1024 * 1024;
/** Entries kept for retries of ended runs, in all (one per paid item). */
export const MAX_ENTRIES = 100_000;
/** An entry this small is never slimmed: a video's task id and request, an error's message. */
const SMALL_ENTRY_BYTES = 64 * 1024;
/** A detail string longer than this goes when an unknown outcome is slimmed. */
const SMALL_DETAIL_CHARS = 1024;

interface Stored {
	entry: GuardEntry;
	bytes: number;
}

interface Scope {
	entries: Map<string, Stored>;
	bytes: number;
	touchedAt: number;
	/** When the run ended with a retry still possible; unset while it runs. */
	endedAt?: number;
}

/** Insertion order is age order: a scope that ends moves to the end. */
const scopes = new Map<string, Scope>();
/** Bytes and entries of ended scopes (what the bounds act on). */
let endedBytes = 0;
let endedCount = 0;

/** About how many bytes a value holds: the length of its strings and buffers, 8 for anything else; no copy made. */
export function approxBytes(value: unknown, depth = 0): number {
	if (typeof value === 'string') return value.length;
	if (value === null || typeof value !== 'object' || depth > 32) return 8;
	if (Buffer.isBuffer(value)) return value.length;
	let bytes = 8;
	for (const [key, inner] of Object.entries(value)) bytes += key.length + approxBytes(inner, depth + 1);
	return bytes;
}

/** Only what a "Not resubmitted" error reuses, never the error object (a request error holds sockets and buffers). */
export function keptError(error: unknown): KeptError {
	const { message, context } = (error ?? {}) as { message?: unknown; context?: unknown };
	return {
		...(typeof message === 'string' ? { message } : {}),
		...(context && typeof context === 'object' ? { context: { ...(context as Record<string, unknown>) } } : {}),
	};
}

/**
 * An error kept in a run that never says it ended (the Chat Model's: its root's run is not its own), where the bounds
 * do not reach: only its small details, as a slimmed entry's (a broken stream's partialContent, up to 32 MB, is not
 * kept for 6 hours; its first try's error carried it).
 */
export function keptBriefly(error: unknown): KeptError {
	const kept = keptError(error);
	if (!kept.context) return kept;
	return { ...kept, context: Object.fromEntries(Object.entries(kept.context).filter(([, value]) => approxBytes(value) <= SMALL_DETAIL_CHARS)) };
}

function sizeOf(entry: GuardEntry): number {
	if (entry.state === 'accepted') return approxBytes(entry.value);
	if (entry.state === 'unknown') return approxBytes(entry.error);
	return 0;
}

function settle(scope: Scope, bytesDelta: number, countDelta: number): void {
	scope.bytes += bytesDelta;
	if (scope.endedAt === undefined) return;
	endedBytes += bytesDelta;
	endedCount += countDelta;
}

/** The entry with its bulk let go: an accepted answer dropped, an error's long details cut. */
function slimmed(entry: GuardEntry): GuardEntry {
	if (entry.state === 'accepted') return { state: 'dropped', at: entry.at };
	if (entry.state !== 'unknown' || !entry.error.context) return entry;
	return { ...entry, error: keptBriefly(entry.error) };
}

function dropScope(name: string): void {
	const scope = scopes.get(name);
	if (!scope) return;
	settle(scope, -scope.bytes, -scope.entries.size);
	scopes.delete(name);
}

const expired = (scope: Scope, now: number) =>
	scope.endedAt !== undefined ? now - scope.endedAt > ENTRY_TTL_MS : now - scope.touchedAt > LIVE_TTL_MS;

/** A full look at every scope costs a step each: with many, at most once a second. */
let lastFullSweep = 0;

/** Expired runs go; then, oldest ended first, large answers until the bytes fit, whole runs until the count fits. */
function sweep(now: number): void {
	if (scopes.size <= 1000 || Math.abs(now - lastFullSweep) >= 1000) {
		lastFullSweep = now;
		for (const [name, scope] of scopes) if (expired(scope, now)) dropScope(name);
	}
	for (const scope of scopes.values()) {
		if (endedBytes <= MAX_KEPT_BYTES) break;
		if (scope.endedAt === undefined) continue;
		for (const [key, { entry, bytes }] of scope.entries) {
			if (bytes <= SMALL_ENTRY_BYTES) continue;
			const slim = slimmed(entry);
			const slimBytes = sizeOf(slim);
			scope.entries.set(key, { entry: slim, bytes: slimBytes });
			settle(scope, slimBytes - bytes, 0);
		}
	}
	for (const [name, scope] of scopes) {
		if (endedCount <= MAX_ENTRIES) break;
		if (scope.endedAt !== undefined) dropScope(name);
	}
}

export function recall(scopeName: string, key: string, now: number = Date.now()): GuardEntry | undefined {
	sweep(now);
	return scopes.get(scopeName)?.entries.get(key)?.entry;
}

/** Writes an entry of a run; the run is going (again: a retry's write makes an ended run live). */
export function remember(scopeName: string, key: string, entry: GuardEntry, now: number = Date.now()): void {
	let scope = scopes.get(scopeName);
	if (!scope) scopes.set(scopeName, (scope = { entries: new Map(), bytes: 0, touchedAt: now }));
	if (scope.endedAt !== undefined) {
		endedBytes -= scope.bytes;
		endedCount -= scope.entries.size;
		scope.endedAt = undefined;
	}
	scope.touchedAt = now;
	const earlier = scope.entries.get(key);
	const bytes = sizeOf(entry);
	scope.entries.set(key, { entry, bytes });
	settle(scope, bytes - (earlier?.bytes ?? 0), earlier ? 0 : 1);
	sweep(now);
}

export function forget(scopeName: string, key: string): void {
	const scope = scopes.get(scopeName);
	const earlier = scope?.entries.get(key);
	if (!scope || !earlier) return;
	scope.entries.delete(key);
	settle(scope, -earlier.bytes, -1);
}

/** The run ended and a retry may come: its entries count against the bounds from now, and expire ENTRY_TTL_MS on. */
export function endScope(scopeName: string, now: number = Date.now()): void {
	const scope = scopes.get(scopeName);
	if (!scope || scope.endedAt !== undefined) return;
	scopes.delete(scopeName);
	scopes.set(scopeName, scope);
	scope.endedAt = now;
	endedBytes += scope.bytes;
	endedCount += scope.entries.size;
	sweep(now);
}

/** Drops everything of one run of a node: no retry can come for it. */
export function forgetScope(scopeName: string): void {
	dropScope(scopeName);
}

/** How many entries, and about how many bytes, the memory holds (tests read it). */
export function guardSize(): number {
	let count = 0;
	for (const scope of scopes.values()) count += scope.entries.size;
	return count;
}

export function guardBytes(): number {
	let bytes = 0;
	for (const scope of scopes.values()) bytes += scope.bytes;
	return bytes;
}

/** Bytes of runs that ended where a retry may come: what MAX_KEPT_BYTES bounds. */
export function endedGuardBytes(): number {
	return endedBytes;
}
