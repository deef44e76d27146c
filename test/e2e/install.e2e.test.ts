// The package as users get it, in a real n8n (2.41.1 by default, 1.123.81 with GEN_GATEWAY_E2E_N8N=1):
//   - installed as n8n's own community-package installer does (the default of every e2e home): packed, unpacked,
//     peer and dev dependencies stripped, no link to the checkout; its `require('n8n-workflow')` resolves to the
//     running n8n's copy, which a probe inside the n8n process proves;
//   - installed by the README's manual route (`npm install --omit=peer` in ~/.n8n/nodes): a Video task is submitted,
//     waited for (the waits that broke on n8n 2.41) and downloaded, with n8n's own n8n-workflow;
//   - a plain `npm install` there puts the `n8n-workflow` 2.x peer beside the package: it works on n8n 2.x and cannot
//     even be installed on n8n 1.x's Node 20 (which is why the README says --omit=peer);
//   - a link to the checkout (the old test layout) as the negative control: the probe sees the checkout.
// Time: about 80 s: four homes, each with the package packed and installed by its own route (npm pack, npm install)
// and its own cold n8n CLI runs (import, then a probed execute); no n8n server.
import * as fs from 'fs';
import * as path from 'path';

import { spawnMockProcess, type MockClient } from '../mock/process';
import {
	createN8nHome,
	e2eMajor,
	installedPackageDir,
	linearWorkflow,
	ModuleProbe,
	nodeItems,
	nodesFolder,
	nodeType,
	PACKAGE_NAME,
	randomId,
	REPO_ROOT,
	runError,
	type CredentialImport,
	type ExecuteResult,
	type InstallRoute,
	type N8nHome,
} from './n8n';

const SETUP_TIMEOUT = 20 * 60_000;
const RUN_TIMEOUT = 4 * 60_000;

function explain(run: ExecuteResult): string {
	return `exit ${run.exitCode} (${run.signal ?? 'no signal'})\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`;
}

describe('the package installed as users install it, in a real n8n', () => {
	const apiKey = `sk-e2e-${randomId(24)}`;
	let mock: MockClient;
	const homes: N8nHome[] = [];

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await mock?.stop();
		for (const home of homes) await home.dispose();
	});

	/** A home with the package installed by `route`, a credential, and a probe of what n8n loads. */
	async function homeBy(installRoute: InstallRoute): Promise<{ home: N8nHome; credential: CredentialImport; probe: ModuleProbe }> {
		const home = await createN8nHome({ build: true, installRoute, logLevel: 'info' });
		homes.push(home);
		const credential = { id: randomId(), name: 'Gen Gateway (e2e)', type: 'genGatewayApi', data: { baseUrl: mock.url, apiKey } };
		await home.importCredential(credential);
		return { home, credential, probe: ModuleProbe.create(home.dir) };
	}

	async function runProbed(home: N8nHome, probe: ModuleProbe, workflow: Record<string, unknown>): Promise<ExecuteResult> {
		const id = await home.importWorkflow(workflow);
		const result = await home.cli(['execute', `--id=${id}`, '--rawOutput'], RUN_TIMEOUT - 30_000, probe.env());
		const { parseRun } = await import('./n8n');
		return { ...result, json: parseRun(result.stdout) };
	}

	const modelsWorkflow = (credential: CredentialImport) =>
		linearWorkflow('Install e2e: models', [
			{
				name: 'Models',
				type: nodeType('genGatewayModels'),
				parameters: { operation: 'getMany', returnAll: true },
				credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
			},
		]);

	const videoWorkflow = (credential: CredentialImport) =>
		linearWorkflow('Install e2e: video', [
			{
				name: 'Video',
				type: nodeType('genGatewayVideo'),
				// [[runMs]] keeps the task running across several polls, so the node really waits between them.
				parameters: { operation: 'generate', model: 'gk_1.5', prompt: 'a fox [[runMs=2500]]', options: { pollInterval: 1 } },
				credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
			},
		]);

	it(
		"as n8n's installer does: a plain copy without peer or dev dependencies, recorded in nodes/package.json (n8n1-smoke)",
		async () => {
			const { home, credential, probe } = await homeBy('n8n');
			const dir = installedPackageDir(home.dir);
			expect(fs.lstatSync(dir).isSymbolicLink()).toBe(false);
			const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
			expect(manifest.name).toBe(PACKAGE_NAME);
			expect(manifest).not.toHaveProperty('peerDependencies');
			expect(manifest).not.toHaveProperty('devDependencies');
			// Zero runtime dependencies: nothing was installed inside it, and no n8n-workflow sits beside it.
			expect(fs.existsSync(path.join(dir, 'node_modules'))).toBe(false);
			expect(fs.existsSync(path.join(nodesFolder(home.dir), 'node_modules', 'n8n-workflow'))).toBe(false);
			const record = JSON.parse(fs.readFileSync(path.join(nodesFolder(home.dir), 'package.json'), 'utf8'));
			expect(record.dependencies).toEqual({ [PACKAGE_NAME]: manifest.version });

			const run = await runProbed(home, probe, modelsWorkflow(credential));
			if (run.exitCode !== 0 || runError(run.json) || !run.json) throw new Error(`the run failed: ${explain(run)}`);
			expect(nodeItems(run.json, 'Models').length).toBeGreaterThan(0);

			// Inside the n8n process: every module of ours came from the installed copy, and each one that uses
			// n8n-workflow got the running n8n's own copy.
			const loaded = probe.loaded();
			expect(loaded.length).toBeGreaterThan(0);
			expect(loaded.filter(({ file }) => !file.startsWith(dir + path.sep))).toEqual([]);
			const linked = loaded.flatMap(({ n8nWorkflow }) => n8nWorkflow);
			expect(linked.length).toBeGreaterThan(0);
			const n8nOwn = path.join(home.install.dir, 'node_modules') + path.sep;
			expect(linked.filter((file) => !file.startsWith(n8nOwn))).toEqual([]);
		},
		SETUP_TIMEOUT,
	);

	/** Runs the video workflow; one submission, SUCCESS after several polls, the mp4 stored. Returns the probe's links. */
	async function generatesVideo(installRoute: InstallRoute): Promise<{ linked: string[]; home: N8nHome }> {
		const { home, credential, probe } = await homeBy(installRoute);
		const before = Math.max(0, ...(await mock.log()).map((entry) => entry.seq));
		const run = await runProbed(home, probe, videoWorkflow(credential));
		if (run.exitCode !== 0 || runError(run.json) || !run.json) throw new Error(`the run failed: ${explain(run)}`);
		const [item] = nodeItems(run.json, 'Video');
		expect(item.json).toMatchObject({ status: 'SUCCESS' });
		expect(item.json.polls).toBeGreaterThanOrEqual(2);
		expect(item.binary?.data?.mimeType).toBe('video/mp4');
		const submissions = (await mock.log()).filter((entry) => entry.seq > before && entry.method === 'POST');
		expect(submissions).toHaveLength(1);
		const linked = probe.loaded().flatMap(({ n8nWorkflow }) => n8nWorkflow);
		expect(linked.length).toBeGreaterThan(0);
		return { linked, home };
	}

	it(
		"by the README's manual route (npm install --omit=peer): a video is submitted, waited for and downloaded (n8n1-smoke)",
		async () => {
			const { linked, home } = await generatesVideo('npm');
			const n8nOwn = path.join(home.install.dir, 'node_modules') + path.sep;
			expect(linked.filter((file) => !file.startsWith(n8nOwn))).toEqual([]);
		},
		SETUP_TIMEOUT,
	);

	it(
		'by a plain npm install (the n8n-workflow 2.x peer beside it): works on n8n 2.x, cannot install on n8n 1.x (Node 20) (n8n1-smoke)',
		async () => {
			if (e2eMajor() === 1) {
				await expect(homeBy('npm-with-peer')).rejects.toThrow(/isolated-vm/);
				return;
			}
			const { linked, home } = await generatesVideo('npm-with-peer');
			const beside = path.join(nodesFolder(home.dir), 'node_modules', 'n8n-workflow') + path.sep;
			expect(linked.every((file) => file.startsWith(beside))).toBe(true);
		},
		SETUP_TIMEOUT,
	);

	it(
		'negative control: with a link to the checkout, the probe sees the checkout (so the check above can fail)',
		async () => {
			const { home, credential, probe } = await homeBy('link');
			const run = await runProbed(home, probe, modelsWorkflow(credential));
			if (run.exitCode !== 0 || runError(run.json) || !run.json) throw new Error(`the run failed: ${explain(run)}`);
			const loaded = probe.loaded();
			expect(loaded.length).toBeGreaterThan(0);
			expect(loaded.every(({ file }) => file.startsWith(path.join(REPO_ROOT, 'dist') + path.sep))).toBe(true);
			const linked = loaded.flatMap(({ n8nWorkflow }) => n8nWorkflow);
			expect(linked.some((file) => file.startsWith(path.join(REPO_ROOT, 'node_modules') + path.sep))).toBe(true);
		},
		SETUP_TIMEOUT,
	);
});
