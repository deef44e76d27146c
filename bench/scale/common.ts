// Shared pieces of the scale benchmark: a mock per case (its own key and limit), prompts with task times, what the
// mock's log says about a run (requests, 429s, submissions per task), exact bytes of delivered videos, and figures.
import { createHash } from 'crypto';
import * as fs from 'fs';

import { randomId, runError, type ExecuteResult } from '../../test/e2e/n8n';
import { spawnMockProcess, type MockClient } from '../../test/mock/process';
import { isLimiterKind, LIMITER_KINDS } from '../../test/mock/limits';
import type { LimiterKind } from '../../test/mock/limits';
import type { LogEntry } from '../../test/mock/types';
import type { BatchCase } from './config';

export type Log = (line: string) => void;

/**
 * A mock process of its own with the service's rate limit (limits are per key; cases may run side by side). Its
 * limiter's kind: SCALE_LIMITER (test/mock/limits.ts LIMITER_KINDS, e.g. `log-s`, new-api's in-memory limiter), the
 * token bucket by default; a run with another kind writes to bench/.work, never the committed results (run.ts).
 */
export async function limitedMock(rateLimit: number, label: string): Promise<MockClient> {
	const limiter = scaleLimiter();
	return await spawnMockProcess({
		apiKey: `scale-${label}-${randomId(20)}`,
		limits: limiter === undefined ? { rateLimit } : { rateLimit, limiter },
	});
}

/** The limiter kind SCALE_LIMITER asks for, or undefined for the mock's default (the token bucket). */
export function scaleLimiter(): LimiterKind | undefined {
	const kind = process.env.SCALE_LIMITER?.trim();
	if (!kind) return undefined;
	if (!isLimiterKind(kind)) throw new Error(`SCALE_LIMITER: unknown kind ${kind}; known: ${LIMITER_KINDS.join(', ')}`);
	return kind;
}

/** POST /__mock/limits (test/mock/limits.ts); fails loudly when the mock has no rate limit to set. */
export async function setRateLimit(mock: MockClient, rateLimit: number): Promise<void> {
	const response = await fetch(`${mock.url}/__mock/limits`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ rateLimit }),
	});
	if (!response.ok) throw new Error(`bench:scale: the mock refused its rate limit (${response.status} ${await response.text()})`);
}

/** N prompts whose tasks take T ± spread seconds (spread evenly, deterministic), with the mock's markers. */
export function batchPrompts(spec: BatchCase, label: string, extra = ''): string[] {
	const { items, taskSeconds: T, spreadSeconds: spread } = spec;
	return Array.from({ length: items }, (_, index) => {
		const fraction = items === 1 ? 0.5 : index / (items - 1);
		const ms = Math.round((T - spread + 2 * spread * fraction) * 1000);
		return `${label} ${index + 1} [[queuedMs=0]] [[runMs=${ms}]] [[ttlMs=3600000]]${extra}`;
	});
}

const pathOf = (entry: LogEntry) => entry.path.split('?')[0];

export interface RequestCounts {
	/** Requests under /v1 the mock received. */
	requests: number;
	/** Of them, answered 429 by the rate limit. */
	limited: number;
	/** POST /v1/tasks/vendor that created a task. */
	submissions: number;
	/** Task ids submitted more than once for the same prompt (a prompt should create exactly one task). */
	duplicatePrompts: number;
	/** Requests per kind, accepted only (status, list, content). */
	byKind: Record<string, number>;
	/** Answered 5xx or cut, other than 429. */
	failed: number;
}

/** A /v1 request's kind: submit, status, list (the artifacts) or content. */
export function requestKind(entry: LogEntry): 'submit' | 'status' | 'list' | 'content' {
	const p = pathOf(entry);
	return p === '/v1/tasks/vendor' ? 'submit' : p.endsWith('/content') ? 'content' : p.endsWith('/artifacts') ? 'list' : 'status';
}

export function countRequests(log: LogEntry[]): RequestCounts {
	const v1 = log.filter((entry) => entry.path.startsWith('/v1/'));
	const created = v1.filter((entry) => entry.method === 'POST' && pathOf(entry) === '/v1/tasks/vendor' && entry.taskId);
	const perPrompt = new Map<string, number>();
	for (const entry of created) {
		const prompt = String((entry.body as { prompt?: string } | undefined)?.prompt);
		perPrompt.set(prompt, (perPrompt.get(prompt) ?? 0) + 1);
	}
	const byKind: Record<string, number> = {};
	for (const entry of v1) {
		if (entry.status === 429) continue;
		const kind = requestKind(entry);
		byKind[kind] = (byKind[kind] ?? 0) + 1;
	}
	return {
		requests: v1.length,
		limited: v1.filter((entry) => entry.status === 429).length,
		submissions: created.length,
		duplicatePrompts: [...perPrompt.values()].filter((count) => count > 1).length,
		byKind,
		failed: v1.filter((entry) => entry.status !== 429 && (entry.status === 0 || entry.status >= 500)).length,
	};
}

export function sha256File(file: string): string {
	return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export interface Delivery {
	/** Items with status SUCCESS and a stored video. */
	delivered: number;
	/** Of them, whose stored bytes hash to what the mock generated for the task. */
	exact: number;
	/** Distinct task ids delivered. */
	distinctTasks: number;
	/** Output items with an error (json.error). */
	failedItems: number;
	/** Error messages of failed items that mention a 429 / rate limit. */
	failedBy429: number;
}

/** Checks each delivered item's stored bytes against the mock's sha256 of its task's artifact. */
export async function checkDeliveries(
	items: Array<{ json: Record<string, unknown>; binary?: Record<string, { id?: string }> }>,
	mock: MockClient,
	fileOf: (binary: { id?: string }) => string | Promise<Buffer>,
): Promise<Delivery> {
	let delivered = 0;
	let exact = 0;
	let failedItems = 0;
	let failedBy429 = 0;
	const tasks = new Set<string>();
	for (const item of items) {
		const error = item.json.error;
		if (error !== undefined) {
			failedItems++;
			if (/429|rate limit/i.test(JSON.stringify(error))) failedBy429++;
			continue;
		}
		const data = item.binary?.data;
		if (item.json.status !== 'SUCCESS' || !data) continue;
		delivered++;
		const taskId = String(item.json.task_id);
		tasks.add(taskId);
		const where = fileOf(data);
		const hash =
			typeof where === 'string' ? sha256File(where) : createHash('sha256').update(await where).digest('hex');
		if (hash === (await mock.artifactSha256(taskId))) exact++;
	}
	return { delivered, exact, distinctTasks: tasks.size, failedItems, failedBy429 };
}

/** One row of the scale table: a measured value beside its ideal, and the target when the issue sets one. */
export interface ScaleFigure {
	id: string;
	/** Issue 22's case: 1 (one execution), 2 (queue mode), 3 (HTTP Request loop), 4 (one download). */
	case: 1 | 2 | 3 | 4;
	label: string;
	value: number;
	unit: string;
	/** The ideal beside it (the floor, 0 failures, the storing floor, …); absent when none applies. */
	ideal?: number;
	target?: { op: '<=' | '>='; value: number };
	met?: boolean;
	/** Measured cause of a missed target. */
	cause?: string;
	how: string;
}

export function figure(spec: Omit<ScaleFigure, 'met'>): ScaleFigure {
	const met = spec.target ? (spec.target.op === '<=' ? spec.value <= spec.target.value : spec.value >= spec.target.value) : undefined;
	return { ...spec, met };
}

export function round(value: number, digits = 1): number {
	const factor = 10 ** digits;
	return Math.round(value * factor) / factor;
}

export function median(values: number[]): number {
	if (values.length === 0) return NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The run's error in a line: n8n's error message (and the node), or the exit and the output's end. */
export function errorOf(result: ExecuteResult): string | undefined {
	const error = result.json ? runError(result.json) : undefined;
	if (error) {
		const node = error.node?.name ? ` (${error.node.name})` : '';
		return `${String(error.message ?? JSON.stringify(error)).slice(0, 400)}${node}`;
	}
	if (result.exitCode !== 0 || !result.json) {
		// n8n execute prints the error before its stack: the last line that names an error and is not a stack frame.
		const lines = `${result.stdout}\n${result.stderr}`.split('\n').map((line) => line.trim());
		const named = lines.filter((line) => /error|429|too many|rate limit/i.test(line) && !line.startsWith('at '));
		return `exit ${result.exitCode}: ${(named[named.length - 1] ?? lines.filter(Boolean).pop() ?? '').slice(0, 300)}`;
	}
	return undefined;
}
