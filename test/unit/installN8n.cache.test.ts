/**
 * scripts/install-n8n.sh keeps n8n outside the checkout: n8n puts every node_modules above its own on NODE_PATH, so an
 * n8n installed inside the checkout lets the installed package resolve the checkout's devDependencies (CI once
 * installed n8n 1.123.81 under .ci-results/ and the Chat Model found the dev copy of @n8n/ai-node-sdk there, which
 * no user of 1.x has). The script refuses before it installs anything.
 */
import { spawnSync } from 'child_process';
import { resolve } from 'path';

const ROOT = resolve(__dirname, '../..');
const SCRIPT = resolve(ROOT, 'scripts/install-n8n.sh');

function install(cache: string) {
	return spawnSync('bash', [SCRIPT], { cwd: ROOT, env: { ...process.env, GEN_GATEWAY_N8N_CACHE: cache }, encoding: 'utf8' });
}

describe('install-n8n.sh: the n8n cache', () => {
	it.each([
		['an absolute folder in the checkout', resolve(ROOT, '.ci-results/n8n-cache')],
		['a relative one that resolves into it', 'x/../.cache-inside'],
		['the checkout itself', ROOT],
	])('refuses %s, naming the cache and the checkout, installing nothing', (_case, cache) => {
		const run = install(cache);
		expect(run.status).toBe(2);
		expect(run.stdout).toBe('');
		expect(run.stderr).toMatch(/is inside the checkout .*NODE_PATH.*GEN_GATEWAY_N8N_CACHE outside it/);
	});

	it('control: a folder beside the checkout passes that check (and fails later on a bad N8N_MAJOR instead)', () => {
		const run = spawnSync('bash', [SCRIPT], {
			cwd: ROOT,
			env: { ...process.env, GEN_GATEWAY_N8N_CACHE: `${ROOT}-n8n-cache`, N8N_MAJOR: '3' },
			encoding: 'utf8',
		});
		expect(run.status).toBe(2);
		expect(run.stderr).toMatch(/N8N_MAJOR must be 1 or 2/);
		expect(run.stderr).not.toMatch(/inside the checkout/);
	});
});
