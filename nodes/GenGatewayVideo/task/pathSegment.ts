/**
 * A task id or artifact key goes into a request path: `.`, `..` (also percent-encoded), a slash, a backslash or a
 * control character would change which address is asked (`/v1/tasks/..` is `/v1/`). The one check, for what the user
 * types (actions/taskId.ts) and for what the service answers (client.ts), alike.
 */
export function changesPath(value: string): boolean {
	let plain = value;
	try {
		plain = decodeURIComponent(value);
	} catch {
		// Not percent-encoded: checked as it is.
	}
	// eslint-disable-next-line no-control-regex
	return plain === '.' || plain === '..' || /[/\\\u0000-\u001f\u007f]/.test(plain);
}

/** A task id as the service may give it: a string, or a number (some gateways count their tasks). */
export function taskIdFrom(value: unknown): string | undefined {
	if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
	if (typeof value !== 'string') return undefined;
	const id = value.trim();
	return id === '' || id.length > 256 || changesPath(id) ? undefined : id;
}
