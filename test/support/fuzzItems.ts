import type { ParameterSet } from './fuzzValues';

/**
 * Carries fuzz parameter sets into a workflow: each set becomes one input item, and each node parameter an expression
 * reading its field from the item. Values JSON cannot hold (NaN, ±Infinity, -0) travel as `{ $odd: '<name>' }` and the
 * expression turns them back, so the node gets them exactly as an expression computing them would give them.
 */

export const FUZZ_FIELDS = [
	'model',
	'prompt',
	'duration',
	'aspectRatio',
	'resolution',
	'seed',
	'generateAudio',
	'referenceImages',
	'referenceVideos',
	'referenceAudios',
	'firstImage',
	'lastImage',
] as const;

function encode(value: unknown): unknown {
	if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) {
		return { $odd: Object.is(value, -0) ? '-0' : String(value) };
	}
	return value;
}

/** The input item for a set; a field that is undefined is left out (the expression then yields undefined). */
export function encodeForItem(set: ParameterSet): Record<string, unknown> {
	const item: Record<string, unknown> = {};
	const values: Record<string, unknown> = { model: set.model, ...set.raw };
	for (const field of FUZZ_FIELDS) {
		if (values[field] !== undefined) item[field] = encode(values[field]);
	}
	return item;
}

/** The parameter expression for a field: the item's value, with odd numbers decoded. */
export function decodedExpression(field: string): string {
	return (
		`={{ (v => v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.$odd === 'string' ` +
		`? ({ NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity, '-0': -0 })[v.$odd] : v)($json.${field}) }}`
	);
}
