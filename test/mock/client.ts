/** A typed client for the admin API, for tests (works with an in-process server or a mock process). */
import { keyLabel, type KeyStats, type MockLimits } from './limits';
import type { FaultRule, FetchedMedia, LogEntry, TaskScript } from './types';

export type { FetchedMedia } from './types';

export interface MockStats {
	/** Per key label (`keyLabel(key)`, a sha256 prefix). */
	keys: Record<string, KeyStats>;
	totals: KeyStats;
	limits: MockLimits;
}

type LimitsInput = Partial<Omit<MockLimits, 'taskSeconds'>> & { taskSeconds?: string | [number, number] | null };

export interface MockClient {
	/** http://127.0.0.1:PORT, no trailing slash. */
	url: string;
	apiKey: string;
	/** Replaces all fault rules. */
	setFaults(rules: FaultRule[]): Promise<void>;
	/** Merges into the global task script (affects tasks submitted afterwards). */
	setTaskScript(partial: Partial<TaskScript>): Promise<TaskScript>;
	/** Clears log, tasks, images, faults; script back to the start-up defaults. */
	reset(): Promise<void>;
	log(): Promise<LogEntry[]>;
	/** Tasks created since the last reset (including accepted-then-cut). */
	submissions(): Promise<number>;
	/** sha256 (hex) of the artifact bytes the task serves. */
	artifactSha256(taskId: string): Promise<string>;
	/** The internal task record (script, phase, media path/expiry, sha256, fetchedMedia). */
	task(taskId: string): Promise<Record<string, unknown>>;
	/** What the mock fetched of the task's loopback frame/reference URLs ([] for none; complete once it finished). */
	fetchedMedia(taskId: string): Promise<FetchedMedia[]>;
	/** Merges into the limits (rateLimit, taskSeconds as "MIN-MAX" or [min, max] or null, readFaultRate, fetchMedia). */
	setLimits(partial: LimitsInput): Promise<MockLimits>;
	/** Counters per key and in total since the last reset. */
	stats(): Promise<MockStats>;
	/** The counters of one key (default: the client's key); zeros when it sent nothing. */
	keyStats(key?: string): Promise<KeyStats>;
	/** Memory of the mock process (bytes): rss, heapUsed, maxRss. */
	health(): Promise<{ pid: number; rss: number; heapUsed: number; maxRss: number }>;
	stop(): Promise<void>;
}

async function admin<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
	const res = await fetch(`${url}/__mock${path}`, {
		method,
		headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const payload = (await res.json()) as T & { error?: { message: string } };
	if (!res.ok) throw new Error(`mock admin ${method} ${path}: ${res.status} ${payload.error?.message ?? ''}`);
	return payload;
}

export function createMockClient(url: string, apiKey: string, stop: () => Promise<void>): MockClient {
	return {
		url,
		apiKey,
		setFaults: async (rules) => {
			await admin(url, 'POST', '/faults', { rules });
		},
		setTaskScript: (partial) => admin<TaskScript>(url, 'POST', '/task-script', partial),
		reset: async () => {
			await admin(url, 'POST', '/reset');
		},
		log: () => admin<LogEntry[]>(url, 'GET', '/log'),
		submissions: async () => (await admin<{ submissions: number }>(url, 'GET', '/state')).submissions,
		artifactSha256: async (taskId) =>
			(await admin<{ sha256: string }>(url, 'GET', `/tasks/${encodeURIComponent(taskId)}`)).sha256,
		task: (taskId) => admin<Record<string, unknown>>(url, 'GET', `/tasks/${encodeURIComponent(taskId)}`),
		fetchedMedia: async (taskId) =>
			(await admin<{ fetchedMedia: FetchedMedia[] }>(url, 'GET', `/tasks/${encodeURIComponent(taskId)}`)).fetchedMedia,
		setLimits: (partial) => admin<MockLimits>(url, 'POST', '/limits', partial),
		stats: () => admin<MockStats>(url, 'GET', '/stats'),
		keyStats: async (key = apiKey) =>
			(await admin<MockStats>(url, 'GET', '/stats')).keys[keyLabel(key)] ?? {
				requests: 0,
				limited: 0,
				submissions: 0,
				readFaults: 0,
			},
		health: () => admin(url, 'GET', '/health'),
		stop,
	};
}
