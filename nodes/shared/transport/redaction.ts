import { redact } from './errors';

/**
 * The key never travels further than the transport: every string of a service's JSON answer (values and keys, at any
 * depth) goes through `redact` before a node sees it, so a `fail_reason`, a status, a `task_id`, an artifact key or a
 * `revised_prompt` that echoes the key cannot carry it into an output, an error, its context or a log line.
 */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
	if (typeof value === 'string') return redact(value, secrets) as T;
	if (Array.isArray(value)) return value.map((entry: unknown) => redactDeep(entry, secrets)) as T;
	if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
		const out: Record<string, unknown> = {};
		for (const [key, entry] of Object.entries(value)) out[redact(key, secrets)] = redactDeep(entry, secrets);
		return out as T;
	}
	return value;
}
