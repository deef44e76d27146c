import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

import { builtEntryPoints } from './build';
import { PACKAGE_NAME, REPO_ROOT, TEMP_ROOT } from './paths';

/**
 * How our package gets into an n8n home, as users get it:
 *   - 'n8n': what n8n's own installer does (Settings → Community Nodes; n8n 2.41.1,
 *     `community-packages.service.js` `downloadPackage`): the packed tarball unpacked into
 *     `.n8n/nodes/node_modules/<name>`, devDependencies, peerDependencies and optionalDependencies deleted from its
 *     package.json, `npm install --install-strategy=shallow --ignore-scripts=true ...` inside it, the dependency
 *     recorded in `.n8n/nodes/package.json`. n8n's own n8n-workflow then resolves through NODE_PATH.
 *   - 'npm': the README's manual route, `npm install --omit=peer <package>` in `.n8n/nodes`: nothing beside the
 *     package, so n8n's own n8n-workflow resolves, as with n8n's installer.
 *   - 'npm-with-peer': a plain `npm install <package>` there, which installs the `n8n-workflow: "*"` peer (2.x)
 *     beside the package; the package then resolves that copy, not n8n's (and on Node 20 the install itself fails:
 *     n8n-workflow 2.x pulls isolated-vm 7, which needs Node 22+). The README warns against it.
 *   - 'link': a symlink to the checkout (the old test layout, which no user has): kept only as the negative control
 *     that proves the resolution check can fail.
 */
export type InstallRoute = 'n8n' | 'npm' | 'npm-with-peer' | 'link';

/**
 * The environment for npm commands run on a user's behalf: none of the `npm_*` variables that `npm test`/`npm start`
 * export (the project's `.npmrc`, e.g. ignore-scripts) may leak into them.
 */
export function cleanNpmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
	const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
	return { ...env, ...extra };
}

let packed: { key: string; file: string } | undefined;

/**
 * `npm pack` of the built package (dist/ as it is), cached by the content of what it packs: within this process, and
 * across the jest workers of a run (each test file would otherwise pack the same content again, about 2 s each). A
 * tarball is published to the shared folder only once complete (packed in a private folder, then renamed), and
 * `packed.json`, written last, names it.
 */
export function packedTarball(): string {
	const key = contentKey();
	if (packed?.key === key && fs.existsSync(packed.file)) return packed.file;
	const dir = path.join(TEMP_ROOT, `gen-gateway-pack-${key}`);
	const record = path.join(dir, 'packed.json');
	try {
		const { filename } = JSON.parse(fs.readFileSync(record, 'utf8')) as { filename: string };
		if (fs.existsSync(path.join(dir, filename))) {
			packed = { key, file: path.join(dir, filename) };
			return packed.file;
		}
	} catch {
		// not packed yet by anyone
	}
	const staging = fs.mkdtempSync(path.join(TEMP_ROOT, 'gen-gateway-pack-staging-'));
	try {
		const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', staging], {
			cwd: REPO_ROOT,
			env: cleanNpmEnv(),
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
		fs.mkdirSync(dir, { recursive: true });
		fs.renameSync(path.join(staging, filename), path.join(dir, filename));
		const tmpRecord = path.join(staging, 'packed.json');
		fs.writeFileSync(tmpRecord, JSON.stringify({ filename }));
		fs.renameSync(tmpRecord, record);
		packed = { key, file: path.join(dir, filename) };
		return packed.file;
	} finally {
		fs.rmSync(staging, { recursive: true, force: true });
	}
}

/** A hash of package.json and every file under dist/: a new build gives a new tarball. */
function contentKey(): string {
	const hash = createHash('sha256').update(fs.readFileSync(path.join(REPO_ROOT, 'package.json')));
	const walk = (dir: string) => {
		for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) walk(full);
			else hash.update(entry.name).update(fs.readFileSync(full));
		}
	};
	builtEntryPoints(); // throws early with a clear message when package.json names no build
	walk(path.join(REPO_ROOT, 'dist'));
	return hash.digest('hex').slice(0, 16);
}

/** `<home>/.n8n/nodes`, where n8n keeps community packages. */
export function nodesFolder(homeDir: string): string {
	return path.join(homeDir, '.n8n', 'nodes');
}

/** Where the package lives in a home, whatever the route. */
export function installedPackageDir(homeDir: string): string {
	return path.join(nodesFolder(homeDir), 'node_modules', PACKAGE_NAME);
}

/**
 * Installs the built package into an n8n home by `route`. `searchPath` is the PATH n8n runs with (its Node first), so
 * npm runs under the same Node as n8n would run it.
 */
export function installPackage(homeDir: string, route: InstallRoute, searchPath: string): void {
	const target = installedPackageDir(homeDir);
	fs.rmSync(target, { recursive: true, force: true });
	fs.mkdirSync(path.dirname(target), { recursive: true });
	if (route === 'link') {
		fs.symlinkSync(REPO_ROOT, target, 'dir');
		return;
	}
	const tarball = packedTarball();
	const npm = (args: string[], cwd: string) =>
		execFileSync('npm', args, { cwd, env: cleanNpmEnv({ PATH: searchPath }), stdio: ['ignore', 'pipe', 'pipe'] });
	if (route === 'npm' || route === 'npm-with-peer') {
		// The README's commands, with the tarball in place of the registry name.
		const omitPeer = route === 'npm' ? ['--omit=peer'] : [];
		npm(['install', '--no-audit', '--no-fund', ...omitPeer, tarball], nodesFolder(homeDir));
		return;
	}
	fs.mkdirSync(target, { recursive: true });
	execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
	const manifestFile = path.join(target, 'package.json');
	// eslint-disable-next-line @typescript-eslint/no-unused-vars
	const { devDependencies, peerDependencies, optionalDependencies, ...manifest } = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
	fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2), 'utf8');
	npm(
		['install', '--audit=false', '--fund=false', '--bin-links=false', '--install-strategy=shallow', '--ignore-scripts=true', '--package-lock=false'],
		target,
	);
	const recordFile = path.join(nodesFolder(homeDir), 'package.json');
	const record = fs.existsSync(recordFile)
		? JSON.parse(fs.readFileSync(recordFile, 'utf8'))
		: { name: 'installed-nodes', private: true, dependencies: {} };
	record.dependencies = { ...record.dependencies, [PACKAGE_NAME]: manifest.version };
	fs.writeFileSync(recordFile, JSON.stringify(record, null, 2), 'utf8');
}
