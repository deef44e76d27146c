/**
 * Prompt markers that override the task script for one task. Written `[[name]]` or `[[name=value]]` anywhere in
 * the prompt. Sizes accept k/M/G suffixes (binary: 64M = 64 MiB). See README.md for the table.
 */
import type { TaskScript } from './types';

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

function parseSize(text: string): number | undefined {
	const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)i?b?$/i.exec(text.trim());
	if (!m) return undefined;
	return Math.floor(Number(m[1]) * SIZE_UNITS[m[2].toLowerCase()]);
}

function parseMs(text: string): number | undefined {
	const n = Number(text.trim());
	return Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined;
}

type MarkerHandler = (value: string | undefined) => Partial<TaskScript> | undefined;

const number = (key: keyof TaskScript, parse: (v: string) => number | undefined): MarkerHandler => (v) => {
	const n = v === undefined ? undefined : parse(v);
	return n === undefined ? undefined : { [key]: n };
};

const MARKERS: Record<string, MarkerHandler> = {
	success: () => ({ outcome: 'success' }),
	fail: (v) => ({ outcome: 'failure', ...(v ? { failReason: v } : {}) }),
	never: () => ({ outcome: 'never' }),
	instant: () => ({ queuedMs: 0, runMs: 0 }),
	slow: (v) => ({ bytesPerSecond: (v && parseSize(v)) || 256 * 1024 }),
	size: number('artifactBytes', parseSize),
	artifactbytes: number('artifactBytes', parseSize),
	queuedms: number('queuedMs', parseMs),
	runms: number('runMs', parseMs),
	ttlms: number('urlTtlMs', parseMs),
	urlttlms: number('urlTtlMs', parseMs),
	bps: number('bytesPerSecond', parseSize),
	bytespersecond: number('bytesPerSecond', parseSize),
	shape: (v) => (v === 'data' || v === 'bare' || v === 'artifacts' ? { artifactListShape: v } : undefined),
	artifactlistshape: (v) => MARKERS.shape(v),
	providerdata: () => ({ providerData: true }),
};

export const MARKER_NAMES = Object.keys(MARKERS);

/** Overrides found in the prompt; unknown markers are ignored (they stay plain prompt text). */
export function markersIn(prompt: string): Partial<TaskScript> {
	const overrides: Partial<TaskScript> = {};
	for (const m of prompt.matchAll(/\[\[\s*([a-zA-Z]+)\s*(?:=\s*([^\]]*?)\s*)?\]\]/g)) {
		const handler = MARKERS[m[1].toLowerCase()];
		const found = handler?.(m[2]);
		if (found) Object.assign(overrides, found);
	}
	return overrides;
}

export function scriptFor(base: TaskScript, prompt: string): TaskScript {
	return { ...base, ...markersIn(prompt) };
}

/** Keeps only known keys with plausible values, so a bad admin call cannot poison the state machine. */
export function sanitizeScript(input: unknown): Partial<TaskScript> {
	if (!input || typeof input !== 'object') return {};
	const src = input as Record<string, unknown>;
	const out: Partial<TaskScript> = {};
	for (const key of ['queuedMs', 'runMs', 'artifactBytes', 'urlTtlMs', 'bytesPerSecond'] as const) {
		if (typeof src[key] === 'number' && Number.isFinite(src[key]) && (src[key] as number) >= 0) {
			out[key] = Math.floor(src[key] as number);
		}
	}
	if ('bytesPerSecond' in src && (src.bytesPerSecond === null || src.bytesPerSecond === 0)) {
		out.bytesPerSecond = undefined;
	}
	if (src.outcome === 'success' || src.outcome === 'failure' || src.outcome === 'never') out.outcome = src.outcome;
	if (typeof src.failReason === 'string') out.failReason = src.failReason;
	const shape = src.artifactListShape;
	if (shape === 'data' || shape === 'bare' || shape === 'artifacts') out.artifactListShape = shape;
	if (typeof src.providerData === 'boolean') out.providerData = src.providerData;
	return out;
}
