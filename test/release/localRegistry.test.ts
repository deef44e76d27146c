/**
 * The loopback registry the release rehearsal and the editor install e2e publish to (test/support/localRegistry.ts):
 * Verdaccio as pinned, successive versions published and installed by npm, no uplink (a name it does not hold is a
 * 404, not a request to the public registry), and the same over TLS with a certificate from a CA made here.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { cleanNpmEnv } from '../e2e/support/packageInstall';
import { REPO_ROOT } from '../e2e/support/paths';
import { ensureReleaseTools, RELEASE_TOOLS_HOST, startLocalRegistry, type LocalRegistry } from '../support/localRegistry';

const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
const toolsManifest = JSON.parse(fs.readFileSync(path.join(RELEASE_TOOLS_HOST, 'package.json'), 'utf8'));
let work: string;

beforeAll(() => {
	work = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-registry-test-'));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** A packed package `name@version` (with publishConfig.provenance, as ours has). */
function tarball(name: string, version: string): string {
	const dir = path.join(work, `${name}-${version}`);
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(
		path.join(dir, 'package.json'),
		JSON.stringify({ name, version, main: 'index.js', publishConfig: { provenance: true } }),
	);
	fs.writeFileSync(path.join(dir, 'index.js'), `module.exports = ${JSON.stringify(version)};\n`);
	const out = execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: dir, env: cleanNpmEnv(), encoding: 'utf8' });
	return path.join(work, JSON.parse(out)[0].filename);
}

function installedVersion(home: string, name: string): string {
	return fs.readFileSync(path.join(home, 'node_modules', name, 'index.js'), 'utf8').match(/"(.*)"/)![1];
}

function npm(args: string[], cwd: string, registry: LocalRegistry, env: NodeJS.ProcessEnv = {}) {
	return spawnSync('npm', [...args, '--userconfig', registry.userconfig, '--cache', path.join(work, 'cache'), '--no-audit', '--no-fund'], {
		cwd,
		env: cleanNpmEnv(env),
		encoding: 'utf8',
		timeout: 120_000,
	});
}

it('runs the Verdaccio and npm 10 that test/release/tools pins, outside the package', async () => {
	expect(toolsManifest.dependencies).toEqual({ npm: '10.9.2', verdaccio: '6.10.4' });
	const tools = await ensureReleaseTools();
	expect([tools.verdaccioVersion, tools.npm10Version]).toEqual(['6.10.4', '10.9.2']);
	// Not in the package's own tree: its package.json carries no overrides (n8n's lint forbids them) and no Verdaccio.
	expect(manifest.overrides).toBeUndefined();
	expect(manifest.devDependencies.verdaccio).toBeUndefined();
}, 300_000);

describe('over HTTP on a free loopback port', () => {
	let registry: LocalRegistry;
	beforeAll(async () => {
		registry = await startLocalRegistry();
	}, 90_000);
	afterAll(async () => await registry?.stop());

	it('publishes successive versions, and npm installs the latest from it', async () => {
		expect(registry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
		expect(await registry.versions('gg-registry-probe')).toEqual([]);
		await registry.publish(tarball('gg-registry-probe', '1.0.0'));
		await registry.publish(tarball('gg-registry-probe', '1.0.1'));
		expect(await registry.versions('gg-registry-probe')).toEqual(['1.0.0', '1.0.1']);
		expect((await registry.packument('gg-registry-probe'))['dist-tags']).toEqual({ latest: '1.0.1' });

		const home = path.join(work, 'install-http');
		fs.mkdirSync(home);
		const install = npm(['install', 'gg-registry-probe'], home, registry);
		expect(install.stderr).not.toMatch(/ERR!/);
		expect(install.status).toBe(0);
		expect(installedVersion(home, 'gg-registry-probe')).toBe('1.0.1');
	}, 120_000);

	it('has no uplink: a package it does not hold is a 404', async () => {
		expect(await registry.packument('left-pad')).toBeUndefined();
		const view = npm(['view', 'left-pad', 'version'], work, registry);
		expect(view.status).not.toBe(0);
		expect(view.stderr).toMatch(/E404/);
	});

	it('refuses a publish without its token', () => {
		const anonymous = path.join(work, 'anonymous.npmrc');
		fs.writeFileSync(anonymous, `registry=${registry.url}\n`);
		const publish = spawnSync(
			'npm',
			['publish', tarball('gg-registry-probe', '1.0.2'), '--userconfig', anonymous, '--provenance=false'],
			{ env: cleanNpmEnv(), encoding: 'utf8', timeout: 60_000 },
		);
		expect(publish.status).not.toBe(0);
		expect(publish.stderr).toMatch(/E401|ENEEDAUTH|401/);
	});
});

describe('over TLS with a certificate from a CA made by the test', () => {
	let registry: LocalRegistry;
	beforeAll(async () => {
		const pki = path.join(work, 'pki');
		fs.mkdirSync(pki);
		const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: pki, stdio: 'pipe' });
		ssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=gen-gateway test CA']);
		ssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'req.csr', '-subj', '/CN=localhost']);
		fs.writeFileSync(path.join(pki, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
		ssl(['x509', '-req', '-in', 'req.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'cert.pem', '-days', '2', '-extfile', 'ext.cnf']);
		const read = (file: string) => fs.readFileSync(path.join(pki, file), 'utf8');
		registry = await startLocalRegistry({ tls: { key: read('key.pem'), cert: read('cert.pem'), ca: read('ca.pem') } });
	}, 90_000);
	afterAll(async () => await registry?.stop());

	it('publishes and installs over HTTPS, trusting only the test CA', async () => {
		expect(registry.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
		await registry.publish(tarball('gg-registry-tls', '2.0.0'));
		const packument = await registry.packument('gg-registry-tls');
		expect(packument.versions['2.0.0'].dist.tarball).toBe(`${registry.url}gg-registry-tls/-/gg-registry-tls-2.0.0.tgz`);

		const home = path.join(work, 'install-tls');
		fs.mkdirSync(home);
		const install = npm(['install', 'gg-registry-tls'], home, registry);
		expect(install.status).toBe(0);
		expect(installedVersion(home, 'gg-registry-tls')).toBe('2.0.0');

		// Without the CA, npm does not trust the certificate (so the cafile above is what made it work).
		const untrusted = path.join(work, 'untrusted.npmrc');
		fs.writeFileSync(untrusted, registry.npmrcLines.filter((line) => !line.startsWith('cafile=')).join('\n'));
		const refused = spawnSync('npm', ['view', 'gg-registry-tls', 'version', '--userconfig', untrusted, '--fetch-retries=0', '--cache', path.join(work, 'cache-untrusted')], {
			env: cleanNpmEnv(),
			encoding: 'utf8',
			timeout: 60_000,
		});
		expect(refused.status).not.toBe(0);
		expect(refused.stderr).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/);
	}, 120_000);
});
