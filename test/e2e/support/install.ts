import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { e2eMajor, REPO_ROOT } from './paths';

export interface N8nInstall {
	/** 1 or 2: which n8n line this is. */
	major: 1 | 2;
	/** The n8n version, as `n8n --version` prints it. */
	version: string;
	/** The host folder printed by scripts/install-n8n.sh. */
	dir: string;
	/** `<dir>/node_modules/.bin`, holding the `n8n` executable. */
	binDir: string;
	/** The `n8n` executable. */
	n8nBin: string;
	/** The PATH to run n8n with (n8n 2.x puts its Node 24 first). */
	path: string;
}

const installs = new Map<number, Promise<N8nInstall>>();

/**
 * Installs (or finds, in about 0.1 s) the pinned n8n through scripts/install-n8n.sh. The first install takes
 * minutes; its progress goes to this process's stderr. Cached per process and major version.
 */
export async function ensureN8n(major: 1 | 2 = e2eMajor()): Promise<N8nInstall> {
	let install = installs.get(major);
	if (!install) {
		install = runInstaller(major);
		installs.set(major, install);
		install.catch(() => installs.delete(major));
	}
	return await install;
}

async function runInstaller(major: 1 | 2): Promise<N8nInstall> {
	const script = path.join(REPO_ROOT, 'scripts', 'install-n8n.sh');
	const stdout = await new Promise<string>((resolve, reject) => {
		const child = spawn('bash', [script], {
			env: { ...process.env, N8N_MAJOR: String(major) },
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		let out = '';
		child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
		child.on('error', reject);
		child.on('close', (code) =>
			code === 0 ? resolve(out) : reject(new Error(`scripts/install-n8n.sh (N8N_MAJOR=${major}) exited with ${code}`)),
		);
	});
	const dir = stdout.trim().split('\n').pop()!.trim();
	const binDir = path.join(dir, 'node_modules', '.bin');
	const n8nBin = path.join(binDir, 'n8n');
	if (!fs.existsSync(n8nBin)) throw new Error(`install-n8n.sh printed ${dir}, but ${n8nBin} does not exist`);
	const nodeBin = path.join(dir, 'node-bin');
	const searchPath = fs.existsSync(nodeBin) ? `${nodeBin}${path.delimiter}${process.env.PATH}` : process.env.PATH!;
	const version = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', 'n8n', 'package.json'), 'utf8')).version;
	return { major, version, dir, binDir, n8nBin, path: searchPath };
}
