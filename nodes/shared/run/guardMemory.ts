/**
 * The submission guard's memory (submissionGuard.ts): what a retry of a paid request needs, per key, in this process,
 * bounded in time, count and bytes. Only the runs that failed while a retry may still come keep anything; every
 * write sweeps what has expired (not only a later lookup: a process that stops paying would otherwise keep it all).
 *
 * When the bytes run over, the oldest entries give up their bulk first: an accepted answer becomes `dropped` (known
 * as paid, never sent again, but no longer reusable), an unknown outcome keeps its message and small details only.
 * When the count runs over, the oldest entries go whole.
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

/** Longer than the longest wait (30 min) plus n8n's longest retry pause (5 min). */
export const ENTRY_TTL_MS = 60 * 60 * 1000;
/** Answers and error details kept for retries, in all (about: strings count by their length). */
export const MAX_KEPT_BYTES = 64 * 1024 * 1024;
/** Entries kept in all (one per paid item of a run that failed and may be retried). */
export const MAX_ENTRIES = 10_000;
/** A detail string longer than this goes first when the bytes run over. */
const SMALL_DETAIL_CHARS = 1024;

interface Stored {
	entry: GuardEntry;
	bytes: number;
}

/** Insertion order is age order: a key written again moves to the end (delete, then set). */
const stored = new Map<string, Stored>();
let keptBytes = 0;

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

function sizeOf(entry: GuardEntry): number {
	if (entry.state === 'accepted') return approxBytes(entry.value);
	if (entry.state === 'unknown') return approxBytes(entry.error);
	return 0;
}

function put(key: string, entry: GuardEntry): void {
	remove(key);
	const bytes = sizeOf(entry);
	stored.set(key, { entry, bytes });
	keptBytes += bytes;
}

function remove(key: string): void {
	const earlier = stored.get(key);
	if (!earlier) return;
	keptBytes -= earlier.bytes;
	stored.delete(key);
}

/** The entry with its bulk let go: an accepted answer dropped, an error's long details cut. */
function slimmed(entry: GuardEntry): GuardEntry {
	if (entry.state === 'accepted') return { state: 'dropped', at: entry.at };
	if (entry.state !== 'unknown' || !entry.error.context) return entry;
	const small = Object.entries(entry.error.context).filter(([, value]) => approxBytes(value) <= SMALL_DETAIL_CHARS);
	return { ...entry, error: { ...entry.error, context: Object.fromEntries(small) } };
}

/** A full look for expired entries costs one step per entry: with many, at most once a second. */
const SMALL_MEMORY = 1000;
let lastFullSweep = 0;

/** Expired entries go; then, oldest first, bulk until the bytes fit, whole entries until the count fits. */
function sweep(now: number = Date.now()): void {
	if (stored.size <= SMALL_MEMORY || Math.abs(now - lastFullSweep) >= 1000) {
		lastFullSweep = now;
		for (const [key, { entry }] of stored) if (now - entry.at > ENTRY_TTL_MS) remove(key);
	}
	for (const [key, { entry, bytes }] of stored) {
		if (keptBytes <= MAX_KEPT_BYTES) break;
		if (bytes === 0) continue;
		const slim = slimmed(entry);
		const slimBytes = sizeOf(slim);
		keptBytes += slimBytes - bytes;
		stored.set(key, { entry: slim, bytes: slimBytes });
	}
	for (const key of stored.keys()) {
		if (stored.size <= MAX_ENTRIES) break;
		remove(key);
	}
}

export function recall(key: string, now: number = Date.now()): GuardEntry | undefined {
	sweep(now);
	const entry = stored.get(key)?.entry;
	if (entry && now - entry.at > ENTRY_TTL_MS) {
		remove(key);
		return undefined;
	}
	return entry;
}

export function remember(key: string, entry: GuardEntry): void {
	put(key, entry);
	sweep();
}

export function forget(key: string): void {
	remove(key);
}

/** Drops every entry whose key starts with `prefix` (one run of one node). */
export function forgetPrefix(prefix: string): void {
	for (const key of [...stored.keys()]) if (key.startsWith(prefix)) remove(key);
}

/** How many entries, and about how many bytes, the memory holds (tests and the bench read it). */
export function guardSize(): number {
	return stored.size;
}

export function guardBytes(): number {
	return keptBytes;
}
