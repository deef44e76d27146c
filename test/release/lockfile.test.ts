/**
 * `npm ci` accepts the committed package-lock.json under every npm the workflows run: npm 11 (the machine's, on Node 20
 * as ci.yml's Node 20 leg, and on the Node 24 the tests fetch, as publish.yml and ci.yml's Node 24 leg) and npm 10.9.2
 * (test/release/tools). A lock written without the other platforms' optional packages (the @unrs/resolver bindings)
 * passes npm 10 and fails npm 11: the control below builds one and shows both.
 *
 * `npm ci --dry-run --ignore-scripts` in a folder holding only package.json, package-lock.json and .npmrc: npm checks
 * that the lock and package.json agree before it would install anything, so about a second per npm.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { ensureN8n } from '../e2e/support/install';
import { cleanNpmEnv } from '../e2e/support/packageInstall';
import { REPO_ROOT } from '../e2e/support/paths';
import { ensureReleaseTools } from '../support/localRegistry';

interface Npm {
	label: string;
	/** The command line before `ci …`. */
	command: string[];
	/** PATH to run it with (which node runs it). */
	PATH: string;
}

let work: string;
let npms: Npm[];

beforeAll(async () => {
	work = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-lockfile-'));
	const [tools, n8n2] = await Promise.all([ensureReleaseTools(), ensureN8n(2)]);
	npms = [
		{ label: 'npm 11 on Node 20', command: ['npm'], PATH: process.env.PATH! },
		// n8n 2.x's PATH: its Node 24 first. The `node` package from the registry carries no npm of its own, so `npm` is
		// the machine's npm 11 running on Node 24, as setup-node's Node 24 (which bundles npm 11) runs it.
		{ label: 'npm 11 on Node 24', command: ['npm'], PATH: n8n2.path },
		{ label: 'npm 10.9.2 on Node 20', command: [process.execPath, tools.npm10Cli], PATH: process.env.PATH! },
	];
}, 300_000);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function version(npm: Npm): { node: string; npm: string } {
	const run = (args: string[]) =>
		spawnSync(args[0], args.slice(1), { env: cleanNpmEnv({ PATH: npm.PATH }), encoding: 'utf8' }).stdout.trim();
	return { node: run(['node', '--version']), npm: run([...npm.command, '--version']) };
}

/** `npm ci --dry-run` on a copy of the project's manifest with `lock` as its lock file. */
function dryRunCi(npm: Npm, lock: string, name: string) {
	const dir = path.join(work, `${name}-${npm.label.replace(/\W+/g, '-')}`);
	fs.mkdirSync(dir);
	for (const file of ['package.json', '.npmrc']) fs.copyFileSync(path.join(REPO_ROOT, file), path.join(dir, file));
	fs.writeFileSync(path.join(dir, 'package-lock.json'), lock);
	const [command, ...args] = npm.command;
	const run = spawnSync(command, [...args, 'ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
		cwd: dir,
		env: cleanNpmEnv({ PATH: npm.PATH }),
		encoding: 'utf8',
		timeout: 120_000,
	});
	return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const committedLock = () => fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8');

/** The committed lock without the other platforms' bindings: what npm 10 wrote here before (issue 19). */
function lockWithoutOtherPlatforms(): string {
	const lock = JSON.parse(committedLock());
	const removed = Object.keys(lock.packages).filter(
		(key) => key.startsWith('node_modules/@unrs/resolver-binding-') && !/-linux-(x64|arm64)-(gnu|musl)$/.test(key),
	);
	for (const key of removed) delete lock.packages[key];
	expect(removed).toHaveLength(17);
	return JSON.stringify(lock, null, 2);
}

it('runs npm 11 on Node 20 and on Node 24, and npm 10.9.2', () => {
	expect(npms.map(version)).toEqual([
		{ node: expect.stringMatching(/^v20\./), npm: expect.stringMatching(/^11\./) },
		{ node: expect.stringMatching(/^v24\./), npm: expect.stringMatching(/^11\./) },
		{ node: expect.stringMatching(/^v20\./), npm: '10.9.2' },
	]);
});

it('npm ci accepts the committed lock file under each of them', () => {
	const lock = committedLock();
	for (const npm of npms) {
		const result = dryRunCi(npm, lock, 'committed');
		expect({ npm: npm.label, status: result.status, output: result.status === 0 ? '' : result.output }).toEqual({
			npm: npm.label,
			status: 0,
			output: '',
		});
	}
}, 120_000);

it('control: a lock without the other platforms\' bindings passes npm 10 and fails npm 11 (the check can fail)', () => {
	const lock = lockWithoutOtherPlatforms();
	const [npm11node20, npm11node24, npm10] = npms;
	for (const npm of [npm11node20, npm11node24]) {
		const refused = dryRunCi(npm, lock, 'pruned');
		expect(refused.status).not.toBe(0);
		expect(refused.output).toContain('`npm ci` can only install packages when your package.json and package-lock.json');
		expect(refused.output).toContain('Missing: @unrs/resolver-binding-android-arm-eabi@1.13.0 from lock file');
		expect(refused.output.match(/Missing: @unrs\/resolver-binding-/g)).toHaveLength(17);
	}
	expect(dryRunCi(npm10, lock, 'pruned').status).toBe(0);
}, 120_000);
