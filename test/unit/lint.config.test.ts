/**
 * `npm run lint` is `n8n-node lint` with this repository's eslint.config.mjs (strict mode off; README, Development,
 * says why). Run on a copy of the config: it must report n8n's community-node findings in shipped code, and leave out
 * the folders that are never published.
 */
import { spawnSync } from 'child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';

const ROOT = resolve(__dirname, '../..');

let dir: string;
beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), 'gen-gateway-lint-'));
	for (const file of ['package.json', 'eslint.config.mjs', 'tsconfig.json']) copyFileSync(join(ROOT, file), join(dir, file));
	symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, text: string) {
	mkdirSync(dirname(join(dir, file)), { recursive: true });
	writeFileSync(join(dir, file), text);
}

function lint() {
	const run = spawnSync(join(ROOT, 'node_modules/.bin/n8n-node'), ['lint'], {
		cwd: dir,
		encoding: 'utf8',
		env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
		timeout: 120_000,
	});
	return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const rethrow = `export function run(work: () => void): void {
	try {
		work();
	} catch (error) {
		console.error('failed');
		throw error;
	}
}
`;

it("reports n8n's rules in shipped code and ignores tests, bench and scripts", () => {
	// Code that runs outside n8n may use timers and the file system.
	write('test/helper.ts', "import { readFileSync } from 'fs';\nsetTimeout(() => readFileSync('x'), 1);\n");
	write('bench/run.ts', 'setTimeout(() => process.exit(0), 1);\n');
	write('scripts/tool.ts', "import { writeFileSync } from 'fs';\nwriteFileSync('x', process.env.X ?? '');\n");
	const clean = lint();
	expect(clean.output).not.toMatch(/Strict mode violation/);
	expect(clean.status).toBe(0);

	write('nodes/Sample/run.ts', rethrow);
	const dirty = lint();
	expect(dirty.status).toBe(1);
	expect(dirty.output).toContain('@n8n/community-nodes/require-node-api-error');
	expect(dirty.output).toContain('no-console');
	expect(dirty.output).not.toMatch(/test\/helper\.ts|bench\/run\.ts|scripts\/tool\.ts/);
});
