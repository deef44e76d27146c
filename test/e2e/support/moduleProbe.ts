import * as fs from 'fs';
import * as path from 'path';

import { PACKAGE_NAME, REPO_ROOT } from './paths';

/** One of our package's modules as a real n8n process loaded it, and the n8n-workflow files it was linked to. */
export interface LoadedModule {
	file: string;
	n8nWorkflow: string[];
}

/**
 * Sees which files a real n8n process loaded for our package and which n8n-workflow each of them got: a script
 * preloaded with `NODE_OPTIONS=--require` writes, at the process's exit, every cached module of our package (by its
 * installed path, or under the checkout's dist/, where a symlink resolves to; only dist/, since CI keeps its n8n
 * inside the checkout) with the n8n-workflow files among its
 * `children` (Node records a child there even when it came from the cache).
 */
export class ModuleProbe {
	private constructor(private readonly dir: string) {}

	static create(homeDir: string): ModuleProbe {
		const dir = path.join(homeDir, 'module-probe');
		fs.rmSync(dir, { recursive: true, force: true });
		fs.mkdirSync(dir, { recursive: true });
		const script = `'use strict';
const fs = require('fs');
const marker = ${JSON.stringify(`${path.sep}node_modules${path.sep}${PACKAGE_NAME}${path.sep}`)};
const checkout = ${JSON.stringify(path.join(REPO_ROOT, 'dist') + path.sep)};
process.on('exit', () => {
	const loaded = [];
	for (const [file, mod] of Object.entries(require.cache)) {
		if (!file.includes(marker) && !file.startsWith(checkout)) continue;
		const n8nWorkflow = (mod.children || []).map((child) => child.filename).filter((f) => /[\\\\/]n8n-workflow[\\\\/]/.test(f));
		loaded.push({ file, n8nWorkflow });
	}
	if (loaded.length) fs.writeFileSync(${JSON.stringify(dir)} + '/loaded-' + process.pid + '.json', JSON.stringify(loaded));
});
`;
		fs.writeFileSync(path.join(dir, 'preload.js'), script);
		return new ModuleProbe(dir);
	}

	/** Environment for an n8n process to be probed. */
	env(): Record<string, string> {
		return { NODE_OPTIONS: `--require ${path.join(this.dir, 'preload.js')}` };
	}

	/** Everything the probed processes loaded of our package. */
	loaded(): LoadedModule[] {
		return fs
			.readdirSync(this.dir)
			.filter((name) => name.startsWith('loaded-'))
			.flatMap((name) => JSON.parse(fs.readFileSync(path.join(this.dir, name), 'utf8')) as LoadedModule[]);
	}
}
