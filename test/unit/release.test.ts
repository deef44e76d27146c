/**
 * What n8n's verification needs from a release, checked on the files that make one: npm provenance (publish.yml from
 * GitHub Actions, and a refusal to publish anywhere else), the package.json fields the gate reads, the MIT license,
 * the changelog, and workflow files that actionlint finds clean (and a broken one that it does not).
 */
import { spawnSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';

const ROOT = resolve(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const manifest = JSON.parse(read('package.json'));

function node(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
	// A clean environment: the test itself may run under npm (npm_config_*) or in GitHub Actions.
	const base = Object.fromEntries(
		Object.entries(process.env).filter(([key]) => !/^(npm_config_|NPM_CONFIG_|GITHUB_)/i.test(key)),
	);
	const run = spawnSync(process.execPath, [join(ROOT, script), ...args], {
		encoding: 'utf8',
		env: { ...base, ...env },
		timeout: 60_000,
	});
	return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('publishing with provenance only', () => {
	it('prepublishOnly starts with the provenance check, then builds, lints and scans', () => {
		expect(manifest.scripts.prepublishOnly).toMatch(/^node scripts\/require-provenance\.mjs && /);
		expect(manifest.scripts.prepublishOnly).toMatch(/npm run build && npm run lint && npm run scan$/);
		// npm itself asks for provenance on every publish, scripts or not (the project's .npmrc turns them off).
		expect(manifest.publishConfig).toEqual({ provenance: true });
	});

	it('refuses a publish outside GitHub Actions', () => {
		const local = node('scripts/require-provenance.mjs');
		expect(local.status).toBe(1);
		expect(local.output).toMatch(/Refusing to publish: not running in GitHub Actions/);
	});

	it('refuses a publish in GitHub Actions with provenance turned off', () => {
		const off = node('scripts/require-provenance.mjs', [], { GITHUB_ACTIONS: 'true', npm_config_provenance: 'false' });
		expect(off.status).toBe(1);
		expect(off.output).toMatch(/provenance is off/);
	});

	it('lets publish.yml publish (GitHub Actions, --provenance)', () => {
		const ci = node('scripts/require-provenance.mjs', [], { GITHUB_ACTIONS: 'true', npm_config_provenance: 'true' });
		expect(ci.output).toMatch(/with npm provenance/);
		expect(ci.status).toBe(0);
	});

	describe('the one override, for the rehearsal on a loopback registry (GEN_GATEWAY_REHEARSAL_REGISTRY)', () => {
		const local = 'http://127.0.0.1:4873/';
		it('lets a publish to that loopback registry through, outside GitHub Actions and without provenance', () => {
			const run = node('scripts/require-provenance.mjs', [], { GEN_GATEWAY_REHEARSAL_REGISTRY: local, npm_config_registry: local });
			expect(run.output).toContain('REHEARSAL publish to the loopback registry http://127.0.0.1:4873/');
			expect(run.status).toBe(0);
		});

		it.each([
			['a registry that is not on loopback', 'https://registry.npmjs.org/', 'https://registry.npmjs.org/', {}, /is not a loopback address/],
			['npm publishing elsewhere', local, 'https://registry.npmjs.org/', {}, /npm publishes to https:\/\/registry\.npmjs\.org\/, not to/],
			["npm's default registry", local, undefined, {}, /npm publishes to its default registry/],
			['GitHub Actions', local, local, { GITHUB_ACTIONS: 'true' }, /never used in GitHub Actions/],
		])('refuses it with %s', (_case, override, registry, extra, reason) => {
			const env: NodeJS.ProcessEnv = { GEN_GATEWAY_REHEARSAL_REGISTRY: override, ...extra };
			if (registry !== undefined) env.npm_config_registry = registry;
			const run = node('scripts/require-provenance.mjs', [], env);
			expect(run.status).toBe(1);
			expect(run.output).toMatch(/^Refusing to publish: /);
			expect(run.output).toMatch(reason);
		});

		it('publish.yml never sets it', () => {
			for (const file of ['publish.yml', 'ci.yml']) expect(read(`.github/workflows/${file}`)).not.toContain('GEN_GATEWAY_REHEARSAL');
		});
	});

	it('publish.yml: on a version tag, with an OIDC token, npm publish --provenance running prepublishOnly', () => {
		const publish = read('.github/workflows/publish.yml');
		expect(publish).toMatch(/on:\n {2}push:\n {4}tags: \['v\*\.\*\.\*'\]/);
		expect(publish).toMatch(/\n {2}id-token: write\n/);
		expect(publish).toMatch(/npm publish --provenance --access public --ignore-scripts=false/);
		expect(publish).toMatch(/registry-url: https:\/\/registry\.npmjs\.org/);
	});

	it('ci.yml: lint, build and tests on pull requests and on main', () => {
		const ci = read('.github/workflows/ci.yml');
		expect(ci).toMatch(/on:\n {2}pull_request:\n {2}push:\n {4}branches: \[main\]/);
		for (const step of ['npm ci', 'npm run lint', 'npm run build', 'npm run scan', 'npm run lint:workflows', 'bash .ci/run']) {
			expect(ci).toContain(`- run: ${step}`);
		}
	});
});

describe('package.json fields the gate reads', () => {
	it('names the public repository, an author and the MIT license', () => {
		expect(manifest.repository).toEqual({
			type: 'git',
			url: 'git+https://github.com/gen-gateway/n8n-nodes-gen-gateway.git',
		});
		expect(manifest.homepage).toBe('https://github.com/gen-gateway/n8n-nodes-gen-gateway#readme');
		expect(manifest.author.name).toEqual(expect.any(String));
		expect(manifest.author.email).toMatch(/@/);
		expect(manifest.license).toBe('MIT');
		expect(manifest.keywords).toContain('n8n-community-node-package');
	});

	it('lints with n8n-node lint in strict mode, on the default config (test/unit/lint.config.test.ts runs it)', () => {
		// ESLint's per-folder config lookup: tests, bench and scripts keep their own eslint.config.mjs.
		expect(manifest.scripts.lint).toBe('ESLINT_FLAGS=unstable_config_lookup_from_file n8n-node lint');
		expect(manifest.n8n.strict).toBe(true);
		expect(read('eslint.config.mjs')).toBe("import { config } from '@n8n/node-cli/eslint';\n\nexport default config;\n");
	});

	it('runs lint, types, the build, the scan and the workflow lint in npm test, before jest (scripts/checks.mjs)', () => {
		expect(manifest.scripts.test).toBe('node scripts/checks.mjs && jest');
		const checks = read('scripts/checks.mjs');
		expect(checks).toContain("const LANES = [['lint'], ['typecheck', 'clean', 'build', 'scan', 'lint:workflows']];");
		expect(manifest.devDependencies['@n8n/scan-community-package']).toBe('0.32.0');
	});
});

describe('LICENSE.md and CHANGELOG.md', () => {
	it('LICENSE.md is the MIT license', () => {
		const license = read('LICENSE.md');
		expect(license).toMatch(/^# MIT License\n\nCopyright \(c\) \d{4} /);
		expect(license).toContain('Permission is hereby granted, free of charge, to any person obtaining a copy');
		expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
	});

	it("CHANGELOG.md follows Keep a Changelog and has package.json's version", () => {
		const changelog = read('CHANGELOG.md');
		expect(changelog).toContain('[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)');
		expect(changelog).toMatch(/\n## \[Unreleased\]\n/);
		expect(changelog).toContain(`\n## [${manifest.version}]`);
		expect(changelog).toContain(`\n[${manifest.version}]: https://github.com/gen-gateway/n8n-nodes-gen-gateway/`);
	});
});

describe('workflow lint (actionlint)', () => {
	let dir: string;
	beforeAll(() => {
		dir = mkdtempSync(join(tmpdir(), 'gen-gateway-workflows-'));
	});
	afterAll(() => rmSync(dir, { recursive: true, force: true }));

	it("finds this repository's workflows clean", () => {
		const result = node('scripts/lint-workflows.mjs');
		expect(result.output).toContain('ci.yml, publish.yml: no findings');
		expect(result.status).toBe(0);
	});

	it('reports a broken workflow (so the check above can fail)', () => {
		const broken = read('.github/workflows/publish.yml')
			.replace('id-token: write', 'id-token: writ')
			.replace('tags:', 'tag:');
		writeFileSync(join(dir, 'publish.yml'), broken);
		const result = node('scripts/lint-workflows.mjs', [dir]);
		expect(result.status).toBe(1);
		expect(result.output).toMatch(/"writ" is invalid for permission of scope "id-token"/);
		expect(result.output).toMatch(/publish\.yml:\d+:\d+: .*"tag"/);
	});
});
