/**
 * Which environment variable sets the public URL n8n builds its signed binary URLs on, for the n8n running the node.
 * n8n's `createBinarySignedUrl` answers `<webhook base URL>/rest/binary-data/signed?token=…`, and the webhook base
 * URL comes from (read in the code of n8n 1.123.81 and 2.41.1, `UrlService.getWebhookBaseUrl`):
 * - n8n 1.x, and 2.x before N8N_WEBHOOK_URL came: `WEBHOOK_URL`, else `N8N_PROTOCOL://N8N_HOST:N8N_PORT`;
 * - n8n 2.30 and later: `N8N_WEBHOOK_URL`, else `WEBHOOK_URL` (which n8n then logs at start as deprecated in favour
 *   of N8N_WEBHOOK_URL), else the same default. `@n8n/config` 2.28.0, which n8n 2.30.0 uses, is the first to read it.
 */

export type WebhookUrlVariable = 'N8N_WEBHOOK_URL' | 'WEBHOOK_URL';

/**
 * Node code may not read the environment or n8n's files, and the `n8n-workflow` the package imports may be a copy npm
 * put beside it rather than n8n's own, so the line is told by what n8n's own engine hands the node: the execute
 * context's `helpers.getSecureEgressFilter`, which n8n-core added in the same release as N8N_WEBHOOK_URL (n8n-core
 * 2.30.0; absent from 2.27.3 and from every 1.x, 1.123.81 included; present in 2.41.1). Pure.
 */
export function webhookUrlVariable(helpers: unknown): WebhookUrlVariable {
	const egressFilter = (helpers as Record<string, unknown> | undefined)?.getSecureEgressFilter;
	return typeof egressFilter === 'function' ? 'N8N_WEBHOOK_URL' : 'WEBHOOK_URL';
}

/** Where n8n takes its public (webhook) URL from, in the words of the running line. */
export function webhookUrlSources(variable: WebhookUrlVariable): string {
	return variable === 'N8N_WEBHOOK_URL'
		? 'N8N_WEBHOOK_URL, else the deprecated WEBHOOK_URL (the only one n8n before 2.30 reads), else ' +
				'N8N_PROTOCOL://N8N_HOST:N8N_PORT'
		: 'WEBHOOK_URL, or when that is unset N8N_PROTOCOL://N8N_HOST:N8N_PORT';
}
