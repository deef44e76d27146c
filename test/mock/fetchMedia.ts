/**
 * The frames and references of a video submission, fetched as a real service would (issue 32): each loopback URL
 * (`limits.fetchMedia: 'loopback'`, the default) is read once at submission, GET, no redirect followed, 10 s at most.
 * Every fetch is recorded on the task (`fetchedMedia`); the task cannot finish before they settle, and the first
 * failure ends it FAILURE with a reason naming the field and the URL without its query (n8n's signed token).
 * Other hosts are never fetched: this machine has no internet, and tests use example.com URLs.
 */
import { createHash } from 'crypto';
import type { MockLimits } from './limits';
import type { FetchedMedia, TaskRecord } from './types';

const FRAME_FIELDS = ['first_image', 'last_image'] as const;
const LIST_FIELDS = ['reference_images', 'reference_videos', 'reference_audios'] as const;
const IS_LIST = new Set<string>(LIST_FIELDS);

export const FETCH_TIMEOUT_MS = 10_000;
/** So that a server's log (n8n's, a test's, the mock's own for its image URLs) tells these reads apart. */
export const MEDIA_FETCH_AGENT = 'gen-gateway-mock/fetch-media';

interface MediaUrl {
	field: FetchedMedia['field'];
	index: number;
	url: string;
}

/** Every URL of the frame and reference fields, in field order (first_image … reference_audios; body validated). */
export function mediaUrlsOf(body: Record<string, unknown>): MediaUrl[] {
	const out: MediaUrl[] = [];
	for (const field of [...FRAME_FIELDS, ...LIST_FIELDS]) {
		const value = body[field];
		const urls = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
		urls.forEach((url, index) => {
			if (typeof url === 'string') out.push({ field, index, url });
		});
	}
	return out;
}

/** 127.0.0.0/8, ::1 and localhost (URL.hostname keeps an IPv6 address in brackets). */
export function isLoopbackUrl(text: string): boolean {
	let host: string;
	try {
		host = new URL(text).hostname.toLowerCase();
	} catch {
		return false;
	}
	if (host === 'localhost' || host.endsWith('.localhost') || host === '[::1]') return true;
	return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The URL as a reason may show it: scheme, host, port and path; never the query, fragment or credentials. */
export function withoutQuery(text: string): string {
	try {
		const url = new URL(text);
		return `${url.origin}${url.pathname}`;
	} catch {
		return text.replace(/[?#].*$/, '');
	}
}

/** `first_image`, or `reference_images[2]` for an entry of a list. */
const label = (m: MediaUrl): string => (IS_LIST.has(m.field) ? `${m.field}[${m.index}]` : m.field);

function networkProblem(err: unknown): string {
	const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
	if (e?.name === 'TimeoutError') return `no complete answer within ${FETCH_TIMEOUT_MS / 1000} s`;
	const text = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
	// Some messages quote the URL (e.g. one with credentials): never its query or credentials.
	return text.replace(/\bhttps?:\/\/[^\s'"]+/gi, (url) => withoutQuery(url));
}

/** One GET: the record, and what went wrong (undefined when the bytes arrived). */
async function fetchOne(m: MediaUrl): Promise<{ record: FetchedMedia; problem?: string }> {
	const hash = createHash('sha256');
	const record: FetchedMedia = { ...m, status: 0, bytes: 0, sha256: '', contentType: null };
	let problem: string | undefined;
	try {
		const res = await fetch(m.url, {
			redirect: 'manual',
			signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
			headers: { 'User-Agent': MEDIA_FETCH_AGENT },
		});
		record.status = res.status;
		record.contentType = res.headers.get('content-type');
		if (res.body) {
			for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
				hash.update(chunk);
				record.bytes += chunk.length;
			}
		}
		if (res.status >= 300 && res.status < 400) problem = `HTTP ${res.status}, a redirect (not followed)`;
		else if (res.status < 200 || res.status >= 300) problem = `HTTP ${res.status}`;
		else if (record.bytes === 0) problem = 'empty body';
	} catch (err) {
		problem = networkProblem(err);
	}
	record.sha256 = hash.digest('hex');
	if (problem) record.error = problem;
	return { record, problem };
}

/** The reason a task fails with when a fetch failed. */
export function fetchFailureReason(field: string, url: string, problem: string): string {
	return `${field}: could not fetch ${withoutQuery(url)} (${problem})`;
}

/**
 * Starts the fetches of a just-created task (none when `limits.fetchMedia` is 'off' or no URL is loopback).
 * Never rejects: the outcome is written on the task.
 */
export function startMediaFetches(task: TaskRecord, limits: MockLimits): void {
	task.fetchedMedia = [];
	if (limits.fetchMedia === 'off') return;
	const wanted = mediaUrlsOf(task.body).filter((m) => isLoopbackUrl(m.url));
	if (wanted.length === 0) return;
	const pending: NonNullable<TaskRecord['mediaFetch']> = { settledAtMs: undefined };
	task.mediaFetch = pending;
	void Promise.all(wanted.map(fetchOne)).then((results) => {
		task.fetchedMedia = results.map((r) => r.record);
		const failed = results.findIndex((r) => r.problem);
		const now = Date.now();
		if (failed !== -1) {
			const m = wanted[failed];
			pending.failure = { reason: fetchFailureReason(label(m), m.url, results[failed].problem!), atMs: now };
		}
		pending.settledAtMs = now;
	});
}
