/**
 * n8n Cloud eligibility as n8n's own tool judges it, and the lint behind it. `n8n-node cloud-support` (node-cli 0.48.3)
 * says eligible when package.json has `"strict": true` and eslint.config.mjs is n8n's 3-line default; `npm run lint`
 * (what cloud-support names as the compliance check) is `n8n-node lint` with ESLint's per-folder config lookup, so
 * the shipped code gets n8n's rules and test/, bench/ and scripts/ get their own (test/eslint.config.mjs).
 * Everything runs on a copy of those files in a temporary folder (node_modules linked).
 */
import { spawnSync } from 'child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { keepOutOfLint } = require('../../scripts/dev-home-lint') as { keepOutOfLint: (home: string) => void };

const ROOT = resolve(__dirname, '../..');
const CONFIG_FILES = [
	'package.json',
	'eslint.config.mjs',
	'tsconfig.json',
	'test/eslint.config.mjs',
	'bench/eslint.config.mjs',
	'scripts/eslint.config.mjs',
];
const DEFAULT_CONFIG = "import { config } from '@n8n/node-cli/eslint';\n\nexport default config;\n";

let dir: string;
beforeAll(() => {
	dir = mkdtempSync(join(tmpdir(), 'gen-gateway-lint-'));
	for (const file of CONFIG_FILES) {
		mkdirSync(dirname(join(dir, file)), { recursive: true });
		copyFileSync(join(ROOT, file), join(dir, file));
	}
	symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, text: string) {
	mkdirSync(dirname(join(dir, file)), { recursive: true });
	writeFileSync(join(dir, file), text);
}

function remove(file: string) {
	rmSync(join(dir, file), { force: true });
}

/** A clean environment: no npm_* of an outer `npm test`, no ESLINT_FLAGS of the caller. */
function env(): NodeJS.ProcessEnv {
	const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|ESLINT_FLAGS$)/i.test(key)));
	return { ...base, FORCE_COLOR: '0', NO_COLOR: '1' };
}

function run(command: string, args: string[]) {
	const result = spawnSync(command, args, { cwd: dir, encoding: 'utf8', env: env(), timeout: 120_000 });
	// eslint-disable-next-line no-control-regex
	return { status: result.status, output: `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '') };
}

/** `npm run lint`, the script as package.json has it. */
const lint = () => run('npm', ['run', 'lint']);
/** `n8n-node lint` alone, without the script's ESLINT_FLAGS. */
const bareLint = () => run(join(ROOT, 'node_modules/.bin/n8n-node'), ['lint']);
const cloudSupport = () => run(join(ROOT, 'node_modules/.bin/n8n-node'), ['cloud-support']);

const rethrow = `export function run(work: () => void): void {
	try {
		work();
	} catch (error) {
		console.error('failed');
		throw error;
	}
}
`;

describe('n8n-node cloud-support', () => {
	afterEach(() => {
		for (const file of ['package.json', 'eslint.config.mjs']) copyFileSync(join(ROOT, file), join(dir, file));
	});

	it('says the package is eligible for n8n Cloud verification: strict mode, the default ESLint config', () => {
		expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).n8n.strict).toBe(true);
		expect(readFileSync(join(ROOT, 'eslint.config.mjs'), 'utf8')).toBe(DEFAULT_CONFIG);
		const verdict = cloudSupport();
		expect(verdict.output).toContain('Strict mode: enabled');
		expect(verdict.output).toContain('ESLint config: using default config');
		expect(verdict.output).toContain('Status: eligible for n8n Cloud verification');
	});

	it('control: a changed eslint.config.mjs or "strict": false is NOT eligible (the check can fail)', () => {
		write('eslint.config.mjs', DEFAULT_CONFIG.replace('export default config;', "export default [{ ignores: ['test'] }, ...config];"));
		const custom = cloudSupport();
		expect(custom.output).toContain('ESLint config: using custom config');
		expect(custom.output).toContain('Status: NOT eligible for n8n Cloud verification');

		copyFileSync(join(ROOT, 'eslint.config.mjs'), join(dir, 'eslint.config.mjs'));
		const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
		write('package.json', JSON.stringify({ ...manifest, n8n: { ...manifest.n8n, strict: false } }, null, 2));
		const loose = cloudSupport();
		expect(loose.output).toContain('Strict mode: disabled');
		expect(loose.output).toContain('Status: NOT eligible for n8n Cloud verification');
	});
});

describe('npm run lint (n8n-node lint in strict mode, per-folder configs)', () => {
	afterEach(() => {
		for (const file of ['test/helper.ts', 'bench/run.ts', 'scripts/tool.ts', 'nodes/Sample/run.ts']) remove(file);
		rmSync(join(dir, '.n8n-dev'), { recursive: true, force: true });
	});

	/** What `npm start` leaves in the checkout: n8n's cached editor build in .n8n-dev/, with the config it writes. */
	const devHome = () => {
		// A .ts file, which n8n's root config has rules for (it lints .js files with none, slowly but without a finding).
		write('.n8n-dev/.cache/n8n/public/assets/index.ts', 'console.log(notDefined);\n');
		keepOutOfLint(join(dir, '.n8n-dev'));
	};

	it('lets tests, bench and scripts use timers, fs and process; applies n8n\'s rules to shipped code', () => {
		// Code that runs outside n8n may use timers, the file system and the process.
		write('test/helper.ts', "import { readFileSync } from 'fs';\nsetTimeout(() => readFileSync('x'), 1);\n");
		write('bench/run.ts', 'setTimeout(() => process.exit(0), 1);\nconsole.log(process.argv);\n');
		write('scripts/tool.ts', "import { writeFileSync } from 'fs';\nwriteFileSync('x', process.env.X ?? '');\n");
		devHome();
		const clean = lint();
		expect(clean.output).toContain('ESLINT_FLAGS=unstable_config_lookup_from_file n8n-node lint');
		expect(clean.output).not.toMatch(/Strict mode violation/);
		expect(clean.status).toBe(0);

		write('nodes/Sample/run.ts', rethrow);
		const dirty = lint();
		expect(dirty.status).toBe(1);
		expect(dirty.output).toContain('@n8n/community-nodes/require-node-api-error');
		expect(dirty.output).toContain('no-console');
		expect(dirty.output).not.toMatch(/test\/helper\.ts|bench\/run\.ts|scripts\/tool\.ts|\.n8n-dev/);
	});

	it('lints tests too, with rules that fit them (no any, no unused variables); control: the dev home without its config is linted', () => {
		write('test/helper.ts', 'export const value: any = 1;\nconst unused = 2;\nconsole.log(value);\n');
		devHome();
		remove('.n8n-dev/eslint.config.mjs');
		const result = lint();
		expect(result.output).toMatch(/\.n8n-dev\/\.cache\/n8n\/public\/assets\/index\.ts/);
		expect(result.status).toBe(1);
		expect(result.output).toMatch(/test\/helper\.ts/);
		expect(result.output).toContain('@typescript-eslint/no-explicit-any');
		expect(result.output).toContain('@typescript-eslint/no-unused-vars');
		expect(result.output).not.toContain('@n8n/community-nodes/');
	});

	it("control: without the flag, ESLint applies n8n's node rules to tests (what the flag is for)", () => {
		write('test/helper.ts', "import { readFileSync } from 'fs';\nsetTimeout(() => readFileSync('x'), 1);\n");
		const result = bareLint();
		expect(result.status).toBe(1);
		expect(result.output).toMatch(/test\/helper\.ts/);
		expect(result.output).toContain('@n8n/community-nodes/no-restricted-imports');
		expect(result.output).toContain('@n8n/community-nodes/no-restricted-globals');
	});
});
