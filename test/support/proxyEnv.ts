/**
 * n8n-core 1.122 sends node requests through agents from `setAxiosAgents` (axios' own proxy handling is off), which
 * ask `proxy-from-env` per request: HTTP_PROXY / HTTPS_PROXY / ALL_PROXY, NO_PROXY, in lower or upper case, and npm's
 * `npm_config_*` variants first (set when tests run under `npm test`). This points all of them at one proxy for the
 * duration of a test and puts everything back afterwards.
 */

const NAMES = [
	'HTTP_PROXY',
	'http_proxy',
	'HTTPS_PROXY',
	'https_proxy',
	'ALL_PROXY',
	'all_proxy',
	'NO_PROXY',
	'no_proxy',
	'npm_config_proxy',
	'npm_config_http_proxy',
	'npm_config_https_proxy',
	'npm_config_no_proxy',
	'npm_config_noproxy',
] as const;

/** Routes http and https requests to `proxyUrl`, with no host excluded; returns a function that restores the env. */
export function useProxyEnv(proxyUrl: string): () => void {
	const saved = new Map(NAMES.map((name) => [name, process.env[name]]));
	for (const name of NAMES) delete process.env[name];
	for (const name of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'] as const) process.env[name] = proxyUrl;
	return () => {
		for (const [name, value] of saved) {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
	};
}
