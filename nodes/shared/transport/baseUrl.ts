/**
 * The credential's base URL is the service root. Users paste it in many shapes ("https://host/", "https://host/v1"),
 * and every path we send already starts with /v1, so normalise once here.
 */
export function normaliseBaseUrl(raw: unknown): string {
	const text = typeof raw === 'string' ? raw.trim() : '';
	return text.replace(/\/+$/, '').replace(/\/v1$/i, '');
}

export function joinUrl(baseUrl: string, path: string): string {
	return `${normaliseBaseUrl(baseUrl)}/${path.replace(/^\/+/, '')}`;
}
