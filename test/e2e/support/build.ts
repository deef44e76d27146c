import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { REPO_ROOT } from './paths';

/** The compiled files package.json's `n8n` section points n8n at (nodes and credentials). */
export function builtEntryPoints(): string[] {
	const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
	const n8n = manifest.n8n ?? {};
	return [...(n8n.nodes ?? []), ...(n8n.credentials ?? [])].map((file: string) => path.join(REPO_ROOT, file));
}

/** Newest modification time of the TypeScript sources and assets that `npm run build` compiles into dist/. */
function newestSourceMtime(): number {
	let newest = 0;
	const walk = (dir: string) => {
		if (!fs.existsSync(dir)) return;
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) walk(full);
			else if (/\.(ts|svg|png|json)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
				newest = Math.max(newest, fs.statSync(full).mtimeMs);
			}
		}
	};
	walk(path.join(REPO_ROOT, 'nodes'));
	walk(path.join(REPO_ROOT, 'credentials'));
	return newest;
}

/** What is wrong with dist/ (missing or older than the sources), or undefined when it is usable. */
export function distProblem(): string | undefined {
	const entries = builtEntryPoints();
	const missing = entries.filter((file) => !fs.existsSync(file));
	if (missing.length > 0) {
		return `dist/ is missing ${missing.map((f) => path.relative(REPO_ROOT, f)).join(', ')}`;
	}
	const oldest = Math.min(...entries.map((file) => fs.statSync(file).mtimeMs));
	if (oldest < newestSourceMtime()) return 'dist/ is older than the sources in nodes/ or credentials/';
	return undefined;
}

/**
 * Makes sure n8n will load a current build of this package. With `build: true` it runs `npm run build`
 * (serialised with other builders through flock) when dist/ is missing or stale; otherwise it throws.
 */
export function ensureBuilt(options: { build?: boolean } = {}): void {
	const problem = distProblem();
	if (!problem) return;
	if (!options.build) throw new Error(`${problem}: run \`npm run build\` before the end-to-end tests`);
	execFileSync('flock', ['/tmp/gen-gateway-build.lock', 'npm', 'run', 'build', '--silent'], {
		cwd: REPO_ROOT,
		stdio: ['ignore', 'inherit', 'inherit'],
	});
	const after = distProblem();
	if (after) throw new Error(`after \`npm run build\`: ${after}`);
}
