import * as path from 'path';

/** The repository root: the package n8n loads as a community package. */
export const REPO_ROOT = path.resolve(__dirname, '../../..');

/** Our npm package name; n8n 1.123 and 2.x name community node types `<package name>.<node name>`. */
export const PACKAGE_NAME = 'n8n-nodes-gen-gateway';

/** Prefix of our node types inside n8n, e.g. `n8n-nodes-gen-gateway.genGatewayModels`. */
export const NODE_TYPE_PREFIX = `${PACKAGE_NAME}.`;

/** Full n8n node type of one of our nodes, from its `description.name`. */
export function nodeType(name: string): string {
	return `${NODE_TYPE_PREFIX}${name}`;
}

/**
 * Which n8n the e2e suite runs against: 2 (default: 2.41.1 on Node 24, the line most users run) or, with
 * GEN_GATEWAY_E2E_N8N=1, 1 (1.123.81 on Node 20).
 */
export function e2eMajor(): 1 | 2 {
	return process.env.GEN_GATEWAY_E2E_N8N === '1' ? 1 : 2;
}

/** Where temporary n8n homes go: outside the repo, so nothing of the checkout (its node_modules) is reachable from them. */
export const TEMP_ROOT = process.env.GEN_GATEWAY_E2E_TMP ?? '/tmp';

/** Serialises the test scripts that call apt-get (apt refuses a second apt at once; jest may run files in parallel). */
export const APT_LOCK = '/tmp/gen-gateway-apt.lock';
