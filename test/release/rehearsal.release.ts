// Time: about 8 minutes (480 s measured beside the 1.x smoke in CI, 2026-11-29: the three jobs 367 s at once, each
// npm ci 184-204 s, Node 24's unit and integration tests 149 s with jest's workers (Node 20's are taken from npm
// test's run of them at the same commit, npmTestRan), the override publish 20 s, n8n start and the Video run 33 s).
// Not part of `npm test`: run it with `npm run test:release` (docs/releasing.md).
/**
 * The release rehearsal: what happens between a version tag and a user's n8n, on this machine.
 *
 * The `run:` steps are read from .github/workflows/ci.yml (job `checks`, each Node of its matrix) and
 * .github/workflows/publish.yml (job `publish`) of a fresh clone of the committed HEAD, and run in order, in bash
 * -eo pipefail as GitHub runs them, each job in a clone of its own (as separate jobs are), all three at once. What
 * GitHub provides is stood in for:
 *   - actions/checkout: the clone (shallow, like checkout's default depth of 1);
 *   - actions/setup-node: node-version 20 is this machine's Node, 24 the Node 24 the e2e suite fetches (first on PATH;
 *     the `node` package from the npm registry carries no npm, so npm is the machine's npm 11 on Node 24, as setup-node's
 *     Node 24 bundles npm 11); registry-url becomes a loopback registry (Verdaccio, test/support/localRegistry.ts),
 *     written as setup-node writes it (an npmrc with `registry=` and `_authToken=${NODE_AUTH_TOKEN}`, NODE_AUTH_TOKEN
 *     a placeholder outside the publish step). That registry holds our package only; every other package is a
 *     redirect to the registry-url the workflow names, so `npm ci` installs from "the registry" as on GitHub while a
 *     publish can reach nothing but loopback;
 *   - GITHUB_REF_NAME=v<package.json version> (the tag), CI=true, and secrets.NPM_TOKEN = the local registry's token.
 * GITHUB_ACTIONS is not set: this is not GitHub Actions, and no OIDC token exists for provenance. So the publish step
 * as written is refused by prepublishOnly; then it runs with the one override (GEN_GATEWAY_REHEARSAL_REGISTRY, see
 * scripts/require-provenance.mjs) and --provenance=false, and publishes to the loopback registry.
 *
 * Then the README's npm route from that registry: `npm install --omit=peer n8n-nodes-gen-gateway` in a new n8n home's
 * ~/.n8n/nodes, n8n 2.41.1 starts and lists the five nodes, and the Video node generates a video against the mock
 * service. On a shared machine run the whole file under the e2e lock (`flock /tmp/gg-e2e.lock npm run test:release`):
 * it starts a real n8n, and its three jobs keep both cores busy.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import YAML from 'yaml';

import { spawnMockProcess, type MockClient } from '../mock/process';
import { ensureN8n, type N8nInstall } from '../e2e/support/install';
import { createN8nHome, randomId, type N8nHome } from '../e2e/support/home';
import { cleanNpmEnv, installedPackageDir, nodesFolder } from '../e2e/support/packageInstall';
import { nodeType, PACKAGE_NAME, REPO_ROOT } from '../e2e/support/paths';
import { runProcess, tail, type ProcessResult } from '../e2e/support/process';
import { linearWorkflow, nodeItems, runError } from '../e2e/workflows/linear';
import { startLocalRegistry, type LocalRegistry } from '../support/localRegistry';

const JOB_TIMEOUT = 25 * 60_000;
const STEP_TIMEOUT = 15 * 60_000;
/** What setup-node exports as NODE_AUTH_TOKEN when registry-url is set and the step names none. */
const PLACEHOLDER_TOKEN = 'XXXXX-XXXXX-XXXXX-XXXXX';

interface Step {
	name?: string;
	uses?: string;
	with?: Record<string, string | number | boolean>;
	run?: string;
	env?: Record<string, string>;
}

interface Job {
	strategy?: { matrix?: Record<string, unknown[]> };
	steps: Step[];
}

interface RunStep {
	label: string;
	script: string;
	env: Record<string, string>;
}

interface JobPlan {
	label: string;
	/** setup-node's node-version. */
	node: string;
	/** setup-node's registry-url, when set. */
	registryUrl?: string;
	steps: RunStep[];
}

interface StepResult extends ProcessResult {
	label: string;
}

let work: string;
let n8n2: N8nInstall;
let registry: LocalRegistry;
let version: string;
const clones = new Map<string, string>();
const timings: string[] = [];

function readJob(clone: string, workflow: string, job: string): Job {
	const parsed = YAML.parse(fs.readFileSync(path.join(clone, '.github', 'workflows', workflow), 'utf8'));
	const found = parsed?.jobs?.[job] as Job | undefined;
	if (!found?.steps) throw new Error(`${workflow} has no job ${job} with steps`);
	return found;
}

/** `${{ … }}` in a workflow value, from the rehearsal's context; anything else is an error (the rehearsal must know it). */
function expand(value: string, context: Record<string, string>): string {
	return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_match, expression: string) => {
		if (!(expression in context)) throw new Error(`the rehearsal has no value for \${{ ${expression} }}`);
		return context[expression];
	});
}

/** The job as the runner would do it: checkout, setup-node, then the run: steps in order. */
function planJob(label: string, job: Job, context: Record<string, string>): JobPlan {
	const [checkout, setupNode, ...rest] = job.steps;
	expect(checkout.uses).toMatch(/^actions\/checkout@/);
	expect(setupNode.uses).toMatch(/^actions\/setup-node@/);
	const node = expand(String(setupNode.with?.['node-version']), context);
	const registryUrl = setupNode.with?.['registry-url'] as string | undefined;
	const steps = rest.map((step, index) => {
		if (step.uses || !step.run) throw new Error(`${label}: step ${index + 3} is not a run: step (${step.uses ?? '?'})`);
		const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([key, value]) => [key, expand(String(value), context)]));
		return { label: step.name ?? step.run.split('\n')[0], script: expand(step.run, context), env };
	});
	return { label, node, registryUrl, steps };
}

/** PATH and Node for setup-node's node-version: 20 is this machine's Node, 24 the fetched Node 24. */
function nodePath(node: string): string {
	// Nothing of the checkout's node_modules/.bin (npm run puts it first): the job has only what npm ci installs.
	const machine = process.env.PATH!.split(path.delimiter).filter((entry) => !entry.includes(`node_modules${path.sep}.bin`));
	if (node === '20') {
		expect(process.versions.node).toMatch(/^20\./);
		return machine.join(path.delimiter);
	}
	if (node === '24') return [path.join(n8n2.dir, 'node-bin'), ...machine].join(path.delimiter);
	throw new Error(`no Node ${node} on this machine`);
}

/** The job's environment: no npm_*, GITHUB_*, jest or N8N_* variables of ours; what the runner and setup-node set. */
function jobEnv(plan: JobPlan, clone: string): NodeJS.ProcessEnv {
	const base = Object.fromEntries(
		Object.entries(cleanNpmEnv()).filter(([key]) => !/^(GITHUB_|RUNNER_|JEST_|N8N_|NODE_ENV$|NODE_OPTIONS$|GEN_GATEWAY_)/.test(key)),
	);
	// The runner has no ~/.npmrc; setup-node writes one when registry-url is set and points npm at it.
	const npmrc = path.join(work, `${path.basename(clone)}.npmrc`);
	if (plan.registryUrl) {
		const url = registry.url;
		fs.writeFileSync(npmrc, `${url.replace(/^https?:/, '')}:_authToken=\${NODE_AUTH_TOKEN}\nregistry=${url}\n`);
	} else {
		fs.writeFileSync(npmrc, '');
	}
	return {
		...base,
		PATH: nodePath(plan.node),
		CI: 'true',
		GITHUB_REF_NAME: `v${version}`,
		NPM_CONFIG_USERCONFIG: npmrc,
		...(plan.registryUrl ? { NODE_AUTH_TOKEN: PLACEHOLDER_TOKEN } : {}),
	};
}

async function runStep(clone: string, env: NodeJS.ProcessEnv, step: RunStep, label: string): Promise<StepResult> {
	const result = await runProcess('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.script], {
		cwd: clone,
		env: { ...env, ...step.env },
		timeoutMs: STEP_TIMEOUT,
	});
	timings.push(`${label.padEnd(14)} ${(result.durationMs / 1000).toFixed(1).padStart(6)} s  exit ${result.exitCode}  ${step.label}`);
	return { ...result, label: step.label };
}

/**
 * The test steps run so far, by Node and script. All jobs check out one commit (asserted) and `npm ci` one lockfile,
 * and a test step writes nothing a later step reads, so the same tests on the same Node in a second job would prove
 * nothing new: publish.yml's unit and integration tests on Node 24 are ci.yml's Node 24 leg's. The second job takes
 * the first one's result (its failure too), which halves the CPU the three jobs need on a two-core machine.
 */
const testRuns = new Map<string, Promise<StepResult>>();
const TEST_STEP = /^npx jest\b/;

function runOnce(plan: JobPlan, clone: string, env: NodeJS.ProcessEnv, step: RunStep): Promise<StepResult> {
	const script = step.script.trim();
	if (!TEST_STEP.test(script) || Object.keys(step.env).length > 0) return runStep(clone, env, step, plan.label);
	const key = `${plan.node}\n${script}`;
	const earlier = testRuns.get(key);
	if (earlier) {
		timings.push(`${plan.label.padEnd(14)}      -         ${step.label}  (the same tests on Node ${plan.node}: taken from the job that ran them)`);
		return earlier;
	}
	const fromNpmTest = plan.node === '20' ? npmTestRan(clone, script) : undefined;
	if (fromNpmTest) {
		timings.push(`${plan.label.padEnd(14)}      -         ${step.label}  (${fromNpmTest.stdout})`);
		testRuns.set(key, Promise.resolve(fromNpmTest));
		return Promise.resolve(fromNpmTest);
	}
	const run = runStep(clone, env, step, plan.label);
	testRuns.set(key, run);
	return run;
}

/**
 * .ci/run's `npm test` already ran these very tests on this machine's Node 20, on this commit, a few minutes before
 * (GEN_GATEWAY_REHEARSAL_NPM_TEST: its jest results). The Node 20 leg then takes them from there, as the second job
 * takes the first one's, instead of running them a third time; only when every file the step would run passed there,
 * on a checkout with nothing uncommitted, in a jest run that began after the commit. Anything else runs the step.
 */
function npmTestRan(clone: string, script: string): StepResult | undefined {
	const file = process.env.GEN_GATEWAY_REHEARSAL_NPM_TEST;
	if (!file || !fs.existsSync(file) || !process.versions.node.startsWith('20.')) return undefined;
	const folders = script.replace(TEST_STEP, '').trim().split(/\s+/);
	if (folders.length === 0 || folders.some((folder) => !/^test\/[\w-]+$/.test(folder))) return undefined;
	const git = (args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
	if (git(['status', '--porcelain']).trim() !== '') return undefined;
	const committedAt = Number(git(['log', '-1', '--format=%ct'])) * 1000;
	const results = JSON.parse(fs.readFileSync(file, 'utf8')) as {
		startTime: number;
		testResults: Array<{ name: string; status: string; assertionResults: Array<{ status: string }> }>;
	};
	if (!(results.startTime >= committedAt)) return undefined;
	const passed = new Map(results.testResults.map((result) => [path.relative(REPO_ROOT, result.name), result]));
	const files = folders.flatMap((folder) => testFiles(path.join(clone, folder)).map((test) => path.relative(clone, test)));
	const missing = files.filter((test) => {
		const result = passed.get(test);
		return !result || result.status !== 'passed' || result.assertionResults.some((assertion) => assertion.status === 'failed');
	});
	if (files.length === 0 || missing.length > 0) return undefined;
	const tests = files.reduce((sum, test) => sum + passed.get(test)!.assertionResults.length, 0);
	const stdout = `the same ${files.length} files (${tests} tests) on Node 20 at this commit: taken from npm test's run`;
	return { label: script, exitCode: 0, signal: null, stdout, stderr: '', durationMs: 0 };
}

/** Every jest test file under a folder (jest.config.js: `*.test.ts`). */
function testFiles(folder: string): string[] {
	return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
		const full = path.join(folder, entry.name);
		if (entry.isDirectory()) return testFiles(full);
		return entry.name.endsWith('.test.ts') ? [full] : [];
	});
}

/** Runs the steps in order, stopping at the first failure (as a job does) or before `stopBefore`. */
async function runJob(plan: JobPlan, clone: string, stopBefore?: (step: RunStep) => boolean): Promise<StepResult[]> {
	const env = jobEnv(plan, clone);
	const results: StepResult[] = [];
	for (const step of plan.steps) {
		if (stopBefore?.(step)) break;
		const result = await runOnce(plan, clone, env, step);
		results.push(result);
		if (result.exitCode !== 0) break;
	}
	return results;
}

function failures(results: StepResult[]): string[] {
	return results
		.filter((result) => result.exitCode !== 0)
		.map((result) => `${result.label}: exit ${result.exitCode}\n${tail(result.stdout, 30)}\n${tail(result.stderr, 30)}`);
}

const PUBLISH_STEP = (step: RunStep) => /^npm publish\b/.test(step.script.trim());
let publishPlan: JobPlan;
let publishEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
	work = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-release-'));
	const head = (await runProcess('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, env: process.env, timeoutMs: 10_000 })).stdout.trim();
	for (const job of ['ci-node20', 'ci-node24', 'publish']) {
		const clone = path.join(work, job);
		const cloned = await runProcess('git', ['clone', '--quiet', '--depth', '1', `file://${REPO_ROOT}`, clone], {
			env: process.env,
			timeoutMs: 120_000,
		});
		if (cloned.exitCode !== 0) throw new Error(`git clone: ${cloned.stderr}`);
		clones.set(job, clone);
	}
	const cloneHead = (await runProcess('git', ['rev-parse', 'HEAD'], { cwd: clones.get('publish'), env: process.env, timeoutMs: 10_000 })).stdout.trim();
	expect(cloneHead).toBe(head);
	version = JSON.parse(fs.readFileSync(path.join(clones.get('publish')!, 'package.json'), 'utf8')).version;
	n8n2 = await ensureN8n(2);
	const publishJob = readJob(clones.get('publish')!, 'publish.yml', 'publish');
	const upstream = publishJob.steps.find((step) => step.uses?.startsWith('actions/setup-node@'))?.with?.['registry-url'];
	expect(typeof upstream).toBe('string');
	registry = await startLocalRegistry({ uplink: { url: String(upstream), localOnly: [PACKAGE_NAME] } });
}, 10 * 60_000);

afterAll(async () => {
	await registry?.stop();
	if (timings.length > 0) process.stderr.write(`release rehearsal, step times:\n${timings.join('\n')}\n`);
	fs.rmSync(work, { recursive: true, force: true });
});

it(
	"runs ci.yml's checks job on each Node of its matrix and publish.yml up to its publish step, from the workflow files",
	async () => {
		const checks = readJob(clones.get('ci-node20')!, 'ci.yml', 'checks');
		expect(checks.strategy?.matrix?.node).toEqual([20, 24]);
		const plans = (checks.strategy!.matrix!.node as number[]).map((node) =>
			planJob(`ci node ${node}`, checks, { 'matrix.node': String(node) }),
		);
		publishPlan = planJob('publish', readJob(clones.get('publish')!, 'publish.yml', 'publish'), {
			'secrets.NPM_TOKEN': registry.token,
		});
		expect(publishPlan.node).toBe('24');
		expect(publishPlan.steps.filter(PUBLISH_STEP)).toHaveLength(1);
		expect(publishPlan.steps.map((step) => step.script.split('\n')[0])).toEqual([
			'npm ci',
			expect.stringContaining('version="v$('),
			'npm run build',
			'npx jest test/unit test/integration',
			'npm publish --provenance --access public --ignore-scripts=false',
		]);
		for (const plan of plans) expect(plan.steps[0].script).toBe('npm ci');

		// Separate jobs on GitHub: all three at once here, each in its own clone.
		const started = Date.now();
		const [node20, node24, publish] = await Promise.all([
			runJob(plans[0], clones.get('ci-node20')!),
			runJob(plans[1], clones.get('ci-node24')!),
			runJob(publishPlan, clones.get('publish')!, PUBLISH_STEP),
		]);
		timings.push(`three jobs    ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  wall`);
		expect([...failures(node20), ...failures(node24), ...failures(publish)]).toEqual([]);
		expect(node20.map((step) => step.label)).toEqual(plans[0].steps.map((step) => step.label));
		expect(node24.map((step) => step.label)).toEqual(plans[1].steps.map((step) => step.label));
		expect(publish).toHaveLength(publishPlan.steps.length - 1);
		// The unit and integration tests ran once per Node: Node 20's leg, and Node 24's for both ci.yml and publish.yml.
		expect([...testRuns.keys()].map((key) => key.split('\n')[0]).sort()).toEqual(['20', '24']);
		// The Node 24 leg really ran on Node 24 with npm 11.
		const versions = await runProcess('bash', ['-c', 'node --version; npm --version'], {
			env: jobEnv(plans[1], clones.get('ci-node24')!),
			timeoutMs: 30_000,
		});
		expect(versions.stdout).toMatch(/^v24\.\d+\.\d+\n11\.\d+\.\d+\n$/);
	},
	JOB_TIMEOUT,
);

it(
	'the publish step as written is refused by prepublishOnly (not GitHub Actions, no provenance): nothing published',
	async () => {
		expect(publishPlan).toBeDefined();
		const clone = clones.get('publish')!;
		publishEnv = jobEnv(publishPlan, clone);
		const step = publishPlan.steps.find(PUBLISH_STEP)!;
		const refused = await runStep(clone, publishEnv, step, 'publish');
		expect(refused.exitCode).not.toBe(0);
		expect(`${refused.stdout}${refused.stderr}`).toContain('Refusing to publish: not running in GitHub Actions');
		expect(await registry.versions(PACKAGE_NAME)).toEqual([]);
	},
	STEP_TIMEOUT,
);

it(
	'with the one override (GEN_GATEWAY_REHEARSAL_REGISTRY, --provenance=false) it publishes to the loopback registry',
	async () => {
		const clone = clones.get('publish')!;
		const step = publishPlan.steps.find(PUBLISH_STEP)!;
		const override: RunStep = {
			label: 'npm publish (rehearsal override)',
			script: step.script.replace('--provenance ', '--provenance=false '),
			env: { ...step.env, GEN_GATEWAY_REHEARSAL_REGISTRY: registry.url },
		};
		expect(override.script).toBe('npm publish --provenance=false --access public --ignore-scripts=false');
		const published = await runStep(clone, publishEnv, override, 'publish');
		const output = `${published.stdout}${published.stderr}`;
		if (published.exitCode !== 0) throw new Error(`publish failed:\n${tail(output, 60)}`);
		// prepublishOnly ran in full: the override, a clean build, n8n-node lint and both scan legs.
		expect(output).toContain(`REHEARSAL publish to the loopback registry ${registry.url}`);
		expect(output).toContain('scan: source leg: no findings');
		expect(output).toContain('scan: tarball leg: no findings');
		expect(await registry.versions(PACKAGE_NAME)).toEqual([version]);
		const packument = await registry.packument(PACKAGE_NAME);
		expect(packument['dist-tags']).toEqual({ latest: version });
		const manifest = packument.versions[version];
		expect(manifest.dist.integrity).toMatch(/^sha512-/);
		expect(manifest.dependencies ?? {}).toEqual({});
		// n8n-workflow, and n8n's AI SDK for the Chat Model: optional, as n8n 1.x has none.
		expect(manifest.peerDependencies).toEqual({ 'n8n-workflow': '*', '@n8n/ai-node-sdk': '*' });
		expect(manifest.peerDependenciesMeta).toEqual({ '@n8n/ai-node-sdk': { optional: true } });
		expect(manifest.n8n.aiNodeSdkVersion).toBe(1);
		expect(manifest.n8n.strict).toBe(true);
	},
	STEP_TIMEOUT,
);

describe("the README's npm route from that registry, in n8n 2.41.1", () => {
	let home: N8nHome;
	let mock: MockClient;
	const apiKey = `sk-release-${randomId(20)}`;

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ withPackage: false, logLevel: 'info' });
	}, 10 * 60_000);

	afterAll(async () => {
		await home?.dispose();
		await mock?.stop();
	});

	it(
		'npm install --omit=peer n8n-nodes-gen-gateway, n8n starts with the five nodes, the Video node makes a video',
		async () => {
			expect(await registry.versions(PACKAGE_NAME)).toEqual([version]);
			const nodes = nodesFolder(home.dir);
			fs.mkdirSync(nodes, { recursive: true });
			// The README's command, with the registry as the user's npm would name it (here: the loopback one).
			const install = await runProcess('npm', ['install', '--omit=peer', PACKAGE_NAME, '--no-audit', '--no-fund'], {
				cwd: nodes,
				env: cleanNpmEnv({ PATH: home.install.path, NPM_CONFIG_USERCONFIG: registry.userconfig }),
				timeoutMs: 180_000,
			});
			if (install.exitCode !== 0) throw new Error(`npm install failed:\n${install.stderr}`);
			const installed = JSON.parse(fs.readFileSync(path.join(installedPackageDir(home.dir), 'package.json'), 'utf8'));
			expect(installed.version).toBe(version);
			expect(fs.existsSync(path.join(nodes, 'node_modules', 'n8n-workflow'))).toBe(false);
			expect(fs.existsSync(path.join(nodes, 'node_modules', '@n8n', 'ai-node-sdk'))).toBe(false);
			const lock = JSON.parse(fs.readFileSync(path.join(nodes, 'package-lock.json'), 'utf8'));
			expect(lock.packages[`node_modules/${PACKAGE_NAME}`].resolved).toMatch(new RegExp(`^${registry.url.replace(/[.]/g, '\\.')}`));

			// n8n 2.41.1 starts with it and lists our five nodes.
			const server = await home.startServer();
			try {
				const cookie = await server.ownerSession();
				const types = await server.rest('GET', '/types/nodes.json', { cookie });
				const names = (types.body as Array<{ name: string }>).map((type) => type.name);
				const ours = ['genGatewayModels', 'genGatewayVideo', 'genGatewayChat', 'genGatewayImage', 'genGatewayChatModel'];
				for (const name of ours) {
					expect(names).toContain(nodeType(name));
				}
			} finally {
				await server.stop();
			}

			// The Video node: one submission, waits, the mp4.
			const credential = { id: randomId(), name: 'Gen Gateway (release)', type: 'genGatewayApi', data: { baseUrl: mock.url, apiKey } };
			await home.importCredential(credential);
			const id = await home.importWorkflow(
				linearWorkflow('Release rehearsal: video', [
					{
						name: 'Video',
						type: nodeType('genGatewayVideo'),
						parameters: { operation: 'generate', model: 'gk_1.5', prompt: 'a fox [[runMs=2500]]', options: { pollInterval: 1 } },
						credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
					},
				]),
			);
			const run = await home.execute(id);
			if (run.exitCode !== 0 || !run.json || runError(run.json)) {
				throw new Error(`the run failed: exit ${run.exitCode}\n${tail(run.stdout, 40)}\n${tail(run.stderr, 40)}`);
			}
			const [item] = nodeItems(run.json, 'Video');
			expect(item.json).toMatchObject({ status: 'SUCCESS' });
			expect(item.binary?.data?.mimeType).toBe('video/mp4');
			expect((await mock.log()).filter((entry) => entry.method === 'POST')).toHaveLength(1);
		},
		10 * 60_000,
	);
});
