/** Shapes shared by the mock service's parts (and by tests that drive it). */
import type { KeyStats, MockLimits, RateLimiter } from './limits';

/**
 * Which real gateway the mock speaks like: 'default' (this project's own contract, the mock's first shape) or
 * 'new-api' (QuantumNous/new-api's task plugin API and relay, as ../shared/GATEWAY-REAL.md describes; newApi.ts).
 */
export type Personality = 'default' | 'new-api';

/** How a video task behaves; a global default, overridable per task by prompt markers (see README.md). */
export interface TaskScript {
	/** Time spent in QUEUED after submission. */
	queuedMs: number;
	/** Time spent in IN_PROGRESS before the outcome. */
	runMs: number;
	/** 'never' keeps the task IN_PROGRESS forever (progress stops at 99%). */
	outcome: 'success' | 'failure' | 'never';
	failReason: string;
	/** Size of the generated mp4 artifact. */
	artifactBytes: number;
	/** Lifetime of the temporary media URL, counted from SUCCESS. */
	urlTtlMs: number;
	/** Throttle for content downloads; unset = as fast as the socket takes it. */
	bytesPerSecond?: number;
	/** Shape of the artifact list: `{data:[...]}`, a bare array, or `{artifacts:[...]}`. */
	artifactListShape: 'data' | 'bare' | 'artifacts';
	/** new-api personality: the status also carries `data`, a provider's own record with its own status words. */
	providerData?: boolean;
}

export const DEFAULT_TASK_SCRIPT: TaskScript = {
	queuedMs: 100,
	runMs: 400,
	outcome: 'success',
	failReason: 'content policy violation',
	artifactBytes: 256 * 1024,
	urlTtlMs: 60_000,
	artifactListShape: 'data',
};

export type FaultKind =
	| 'status'
	| 'cut-after-accept'
	| 'cut-before'
	| 'cut-mid-body'
	| 'malformed-json'
	| 'html'
	| 'empty'
	| 'delay'
	| 'hang'
	| 'sse-cut';

export interface FaultRule {
	/** HTTP method to match (case-insensitive); any when unset. */
	method?: string;
	/** Regex source matched against the request path (without the query string). */
	path: string;
	/** How many times the rule fires (default 1; -1 = always). */
	times?: number;
	/** Let this many matching requests pass before firing. */
	skip?: number;
	kind: FaultKind;
	status?: number;
	/** Seconds, sent as Retry-After (kind 'status'). */
	retryAfter?: number;
	/** Wait before handling (kind 'delay'). */
	delayMs?: number;
	/** Bytes of the body sent before the socket is destroyed (kind 'cut-mid-body'; default half). */
	afterBytes?: number;
}

export interface LogEntry {
	seq: number;
	/** ISO time of arrival. */
	time: string;
	method: string;
	/** Path with query string. */
	path: string;
	/** Status sent; 0 when the socket was destroyed before any header. */
	status: number;
	/** Parsed JSON request body (raw text if it was not JSON). */
	body?: unknown;
	authorized: boolean;
	/** What happened beyond the status: 'fault:<kind>', 'accepted-then-cut', 'task-created', 'sse-cut', ... */
	outcome?: string;
	/** error.message of an error answer. */
	error?: string;
	/** Task created or addressed by the request. */
	taskId?: string;
	/** sha256 of the binary body served (images, media). */
	sha256?: string;
	/** Bytes of body written (binary downloads). */
	bytes?: number;
	/** true: the mock itself read a submitted frame/reference URL on its own address (fetchMedia.ts), not a client. */
	mediaFetch?: true;
}

/** One GET of a frame or reference URL by the mock at submission (fetchMedia.ts), as the admin record shows it. */
export interface FetchedMedia {
	field: 'first_image' | 'last_image' | 'reference_images' | 'reference_videos' | 'reference_audios';
	/** Position in a reference list (0 for a frame). */
	index: number;
	/** The URL as submitted (query included). */
	url: string;
	/** HTTP status; 0 when no answer came (refused, reset, timed out). */
	status: number;
	/** Body bytes read. */
	bytes: number;
	/** sha256 (hex) of the body bytes read. */
	sha256: string;
	/** The Content-Type header; null when absent. */
	contentType: string | null;
	/** Why the fetch failed the task (non-2xx, redirect, empty body, network error); absent when it served bytes. */
	error?: string;
}

export interface TaskRecord {
	id: string;
	model: string;
	prompt: string;
	body: Record<string, unknown>;
	createdAtMs: number;
	script: TaskScript;
	/** Token of the temporary media URL `/tmp-media/<token>.mp4`. */
	mediaToken: string;
	/** Seed of the deterministic artifact bytes. */
	mediaSeed: string;
	/** Cached sha256 of the artifact (computed on demand or after a full download). */
	sha256?: string;
	/** The wire this task speaks (the process's personality, or 'new-api' by the `[[new-api]]` prompt marker). */
	personality: Personality;
	/** The fetches of its loopback frame/reference URLs, in field order, once all settled ([] until then). */
	fetchedMedia: FetchedMedia[];
	/** Set when fetches were started: the task cannot finish before `settledAtMs`; a failure ends it FAILURE then. */
	mediaFetch?: { settledAtMs?: number; failure?: { reason: string; atMs: number } };
}

export interface ImageRecord {
	id: string;
	model: string;
	prompt: string;
	index: number;
	size: string;
	bytes: Buffer;
	sha256: string;
}

export interface MockState {
	log: LogEntry[];
	tasks: Map<string, TaskRecord>;
	images: Map<string, ImageRecord>;
	faults: (FaultRule & { fired: number; seen: number })[];
	script: TaskScript;
	/** The script `reset` returns to (built-in defaults merged with the start options). */
	defaults: TaskScript;
	/** Tasks created since the last reset (includes accepted-then-cut). */
	submissions: number;
	seq: number;
	/** http://127.0.0.1:PORT, set once listening. */
	baseUrl: string;
	/** Rate limit, task duration range, read faults (limits.ts). */
	limits: MockLimits;
	/** What `reset` returns the limits to. */
	defaultLimits: MockLimits;
	limiter: RateLimiter;
	/** Per key label (limits.ts `keyLabel`): requests, 429s, submissions, read faults. */
	keyStats: Map<string, KeyStats>;
	/** The process's personality (start option / MOCK_PERSONALITY); kept by `reset`. */
	personality: Personality;
	/** Signs the new-api `?access=` capability URLs (random per process). */
	accessSecret: string;
}
