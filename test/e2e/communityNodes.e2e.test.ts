// The way most users install and update the package, in Chromium on n8n 2.41.1: Settings → Community nodes →
// Install (npm name typed, risk notice accepted), the update the same page offers when a new version appears, and
// uninstall; n8n downloads from its own default registry, as for every user.
//
// How n8n reaches a registry of ours under its default registry's name (support/registryNamespace.ts): n8n 2.41.1
// installs from its built-in default registry only (another N8N_COMMUNITY_PACKAGES_REGISTRY needs an enterprise
// licence), so `n8n start` runs alone in a mount namespace of the test's own whose hosts file maps that registry's
// host name (read from n8n's code at run time; no file of ours names it) to 127.0.0.1, where Verdaccio
// (test/support/localRegistry.ts) serves HTTPS on port 443 with a certificate from a CA the test made, trusted by n8n
// and its npm through NODE_EXTRA_CA_CERTS. Every other name n8n or its npm looks up is answered "no such name" by a
// DNS recorder on loopback, and Chromium's requests beyond loopback are aborted: no traffic leaves loopback.
//
// The steps, on one n8n and one browser: 0.1.0 (the packed build) published and installed from the editor; an example
// run to its mp4 from the editor; a durable wait (examples/video-long-task-durable-wait.json over a webhook) parked as
// `waiting`; 0.1.1 (the same build, version bumped in a copy) published, the page offers the update, updated from the
// editor; the "+" panel's search finds the five nodes (Chat Model included); the saved example runs again; the parked execution resumes
// after the update and delivers its mp4; uninstall (nodes gone, workflows kept, n8n's missing-node state, n8n up);
// install again.
//
// Time: about 200 s (164-240 s measured 2026-11-24 in three runs, 2 cores shared with other work; set-up with n8n
// start, Chromium and sign-in 25-45 s), over 60 s because every step is n8n's own pace and they depend on each other: package installs and updates
// (npm pack and install, 2-10 s each, plus `npm outdated` each time the page lists packages), two example runs from
// the editor, and the durable wait, whose Wait node must park the execution in the database (n8n keeps waits under
// 65 s in memory), so the resume comes 70 s after parking; the update, the "+" search and the second run fill that
// time (0-45 s of it stays idle, depending on the machine's load). The update must end within those 70 s (it took
// 9-27 s): the test checks that the execution still waits when the update is done, and fails plainly otherwise.
import { execFileSync } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

import { spawnMockProcess, type MockClient } from '../mock/process';
import type { LogEntry } from '../mock/types';
import { startLocalRegistry, type LocalRegistry } from '../support/localRegistry';
import { timed } from '../timing/phases';
import { launchChromium, type BrowserSession } from './browser/chromium';
import {
	confirmInstall,
	fillInstallDialog,
	openCommunityNodes,
	readCards,
	uninstallFromCard,
	updateFromCard,
	type PackageCard,
} from './browser/communityNodes';
import { openWorkflow, signIn, UI_TIMEOUT } from './browser/editor';
import { nodeCreator, openNodeCreator, searchNodes } from './browser/nodeCreator';
import { FAILURE_DIR, step } from './browser/screenshots';
import { durableWebhookWorkflow } from './workflows/durableWorkflow';
import { EXAMPLE_CREDENTIAL, exampleCredential, loadExample, type ExampleWorkflow } from './workflows/examples';
import { listExecutions, readExecution, waitForExecutions, waitForWebhook } from './workflows/executions';
import { SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import {
	cleanNpmEnv,
	createN8nHome,
	DEFAULT_OWNER,
	e2eMajor,
	FRESH_CONNECTION,
	installedPackageDir,
	linearWorkflow,
	nodeType,
	packedTarball,
	PACKAGE_NAME,
	REPO_ROOT,
	type N8nHome,
	type N8nServer,
} from './n8n';
import { defaultRegistryUrl, prepareRegistryNamespace, startDnsRecorder, type DnsRecorder, type RegistryNamespace } from './support/registryNamespace';
import { TEMP_ROOT } from './support/paths';
import { createTestCa } from './support/testCa';

const NODE_NAMES = ['Gen Gateway Chat', 'Gen Gateway Chat Model', 'Gen Gateway Image', 'Gen Gateway Models', 'Gen Gateway Video'];
const NODE_TYPES = ['genGatewayChat', 'genGatewayChatModel', 'genGatewayImage', 'genGatewayModels', 'genGatewayVideo'].map(nodeType);
const EXAMPLE = 'video-generate-and-wait.json';
const DURABLE_PATH = 'community-durable';
/** The durable task: done long before the first check, 70 s after parking; its video URL outlives that check. */
const DURABLE_PROMPT = 'A lighthouse through a day and a night [[queuedMs=0]] [[runMs=20000]] [[ttlMs=900000]]';
const MP4_FTYP = Buffer.from('ftyp');
const FINISHED = ['success', 'error', 'crashed', 'canceled'];
const STEP_TIMEOUT = 6 * 60_000;

/** The docs' pictures, rewritten with GEN_GATEWAY_UPDATE_SCREENSHOTS=1 (else temporary copies). */
const SCREENSHOT_DIR = process.env.GEN_GATEWAY_UPDATE_SCREENSHOTS === '1' ? path.join(REPO_ROOT, 'docs', 'screenshots') : FAILURE_DIR;
const INSTALL_SCREENSHOT = path.join(SCREENSHOT_DIR, 'install-community-nodes.png');
const UPDATE_SCREENSHOT = path.join(SCREENSHOT_DIR, 'update-community-node.png');

/** `npm pack` of a copy of the packed package with another version and a field only this copy has. */
function bumpedCopy(tarball: string, version: string, dir: string, marker: string): string {
	const copy = path.join(dir, `copy-${version}`);
	fs.mkdirSync(copy, { recursive: true });
	execFileSync('tar', ['-xzf', tarball, '-C', copy, '--strip-components=1']);
	const manifestFile = path.join(copy, 'package.json');
	const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
	fs.writeFileSync(manifestFile, JSON.stringify({ ...manifest, version, genGatewayE2eBuild: marker }, null, 2));
	const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
		cwd: copy,
		env: cleanNpmEnv(),
		encoding: 'utf8',
	});
	return path.join(dir, (JSON.parse(out) as Array<{ filename: string }>)[0].filename);
}

const sortedNodes = (card: PackageCard): PackageCard => ({ ...card, nodes: [...card.nodes].sort() });
const statusChecks = (log: LogEntry[], taskId: string) =>
	log.filter((entry) => entry.method === 'GET' && entry.path.split('?')[0] === `/v1/tasks/${taskId}`);

describe('Settings → Community nodes in Chromium on n8n 2.41.1: install, update, uninstall from n8n’s default registry (served on loopback)', () => {
	const apiKey = `sk-e2e-community-${randomBytes(12).toString('hex')}`;
	const marker = randomBytes(8).toString('hex');
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer;
	let cookie: string;
	let browser: BrowserSession;
	let registry: LocalRegistry;
	let dns: DnsRecorder;
	let namespace: RegistryNamespace;
	let workDir: string;
	let registryUrl: string;
	let tarball011: string;
	let example: ExampleWorkflow;
	let durable: ExampleWorkflow;
	let searchWorkflowId: string;
	/** Requests Chromium tried beyond loopback (aborted). */
	const browserEscapes: string[] = [];
	/** Shared between the steps. */
	const state: { parkedAt?: number; updatedAt?: number; durableExecution?: string } = {};

	const page = () => browser.page;
	/** Whether a confirmation dialog's text names both workflows that use the package's nodes. */
	const namesBoth = (text: string) => [example, durable].every((workflow) => text.includes(workflow.name));

	/** Runs a saved workflow from the editor (its Execute button) and returns the finished execution's run data. */
	const runFromEditor = async (workflowId: string): Promise<{ status: string; data: any }> => { // eslint-disable-line @typescript-eslint/no-explicit-any
		const before = new Set((await listExecutions(server, cookie, workflowId)).map((execution) => execution.id));
		await openWorkflow(page(), server.url, workflowId);
		// The canvas's "Execute workflow" button (each trigger also has a hidden `execute-workflow-button-<name>`).
		await page().locator('[data-test-id="execute-workflow-button"]').filter({ visible: true }).first().click({ timeout: UI_TIMEOUT });
		const [finished] = await timed('run', 'example run from the editor', () =>
			waitForExecutions(server, cookie, workflowId, (all) => all.some((one) => !before.has(one.id) && FINISHED.includes(one.status)), 180_000),
		).then((all) => all.filter((one) => !before.has(one.id)));
		return await readExecution(server, cookie, finished.id);
	};

	/** The example's run ended with the mock's mp4, byte for byte, from one paid submission. */
	const expectExampleDelivered = async (run: { status: string; data: any }) => { // eslint-disable-line @typescript-eslint/no-explicit-any
		expect({ status: run.status, error: run.data.resultData.error?.message }).toEqual({ status: 'success', error: undefined });
		const [item] = run.data.resultData.runData['Generate Video'][0].data.main[0];
		expect(item.json).toMatchObject({ status: 'SUCCESS', model: 'sd_2.0_fast_discount' });
		expect(item.binary.data).toMatchObject({ mimeType: 'video/mp4', fileName: `${item.json.task_id}.mp4` });
		const bytes = await home.binaryFile(item.binary.data.id);
		expect(bytes.subarray(4, 8)).toEqual(MP4_FTYP);
		expect(sha256(bytes)).toBe(await mock.artifactSha256(item.json.task_id));
		expect(submissionsIn(await mock.log()).filter((entry) => (entry.body as { prompt?: string })?.prompt === item.json.request.prompt).length).toBeGreaterThanOrEqual(1);
	};

	const nodeTypesLoaded = async (): Promise<string[]> => {
		const answer = await server.rest('GET', '/types/nodes.json', { cookie });
		const types = new Set((answer.body as Array<{ name: string }>).map((type) => type.name));
		return NODE_TYPES.filter((type) => types.has(type));
	};

	beforeAll(async () => {
		if (e2eMajor() !== 2) throw new Error('this test drives n8n 2.41.1’s Community nodes page: run it without GEN_GATEWAY_E2E_N8N=1');
		mock = await spawnMockProcess({ apiKey });
		// A plain n8n: the package arrives through the editor.
		home = await createN8nHome({ build: true, withPackage: false });
		registryUrl = defaultRegistryUrl(home.install);
		workDir = fs.mkdtempSync(path.join(TEMP_ROOT, 'gen-gateway-community-'));
		const ca = createTestCa(path.join(workDir, 'ca'), { dnsNames: [new URL(registryUrl).hostname], ipAddresses: ['127.0.0.1'] });
		// The port of n8n's registry address (443 for https without one): clients inside the namespace connect there.
		const port = Number(new URL(registryUrl).port || (new URL(registryUrl).protocol === 'https:' ? 443 : 80));
		registry = await startLocalRegistry({ host: '127.0.0.1', port, tls: { key: ca.keyPem, cert: ca.certPem, ca: ca.caPem } });
		await registry.publish(packedTarball());
		tarball011 = bumpedCopy(packedTarball(), '0.1.1', workDir, marker);
		expect(await registry.versions(PACKAGE_NAME)).toEqual(['0.1.0']);

		example = loadExample(EXAMPLE);
		durable = durableWebhookWorkflow({ id: 'ggCommunityDur01', webhookPath: DURABLE_PATH });
		const search = linearWorkflow('Find the Gen Gateway nodes', []);
		searchWorkflowId = search.id as string;
		// The credential through n8n's CLI: over REST, n8n refuses a credential
		// whose type no installed package defines yet ("Unrecognized credential type").
		await home.importCredential(exampleCredential(mock.url, apiKey));

		dns = await startDnsRecorder();
		namespace = prepareRegistryNamespace({ dir: path.join(workDir, 'namespace'), registryUrl, dns, caFile: ca.caFile });
		server = await home.startServer({
			wrap: (command, args, env) => ({ ...namespace.wrap(command, args), env: namespace.env(env) }),
		});
		cookie = await server.ownerSession();
		// The workflows through the server's REST API as the editor imports them (2.x keeps their ids), before the
		// package that their Gen Gateway nodes need is installed.
		await server.importWorkflows([example, durable, search]);
		browser = await launchChromium({ width: 1280, height: 900 });
		await browser.context.route('**/*', async (route) => {
			const { hostname } = new URL(route.request().url());
			if (hostname === '127.0.0.1' || hostname === 'localhost') return await route.continue();
			browserEscapes.push(route.request().url());
			await route.abort('blockedbyclient');
		});
		await step(page(), 'sign in', () => signIn(page(), server.url, DEFAULT_OWNER.email, DEFAULT_OWNER.password));
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await browser?.close();
		await server?.stop();
		await registry?.stop();
		await dns?.stop();
		await mock?.stop();
		await home?.dispose();
		if (workDir && process.env.GEN_GATEWAY_E2E_KEEP !== '1') fs.rmSync(workDir, { recursive: true, force: true });
		// eslint-disable-next-line no-console
		console.log(
			`community nodes e2e: n8n looked up ${JSON.stringify([...new Set(dns?.names() ?? [])])} (answered "no such name" on loopback); ` +
				`Chromium tried ${JSON.stringify(browserEscapes)} beyond loopback (aborted); failure screenshots go to ${FAILURE_DIR}`,
		);
	});

	it(
		'installs 0.1.0 from Settings → Community nodes (npm name, risk notice accepted), from the local registry under n8n’s default registry’s name',
		async () => {
			expect(await nodeTypesLoaded()).toEqual([]);
			await step(page(), 'open Community nodes', () => openCommunityNodes(page(), server.url));
			expect(await readCards(page())).toEqual([]);

			const dialog = await step(page(), 'fill in the install dialog', () => fillInstallDialog(page(), PACKAGE_NAME));
			fs.mkdirSync(path.dirname(INSTALL_SCREENSHOT), { recursive: true });
			await page().screenshot({ path: INSTALL_SCREENSHOT, animations: 'disabled', caret: 'hide' });
			expect(await dialog.innerText()).toContain('I understand the risks of installing unverified code from a public source');

			const card = await step(page(), 'install', () => confirmInstall(page(), PACKAGE_NAME));
			expect(sortedNodes(card)).toEqual<PackageCard>({ name: PACKAGE_NAME, version: '0.1.0', nodes: NODE_NAMES, updateOffered: false });
			expect(await nodeTypesLoaded()).toEqual(NODE_TYPES);

			// What n8n installed is this build, fetched from the local registry: every file of dist/ as built here.
			const installed = installedPackageDir(home.dir);
			const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
			expect(manifest).toMatchObject({ name: PACKAGE_NAME, version: '0.1.0' });
			expect(manifest.peerDependencies).toBeUndefined(); // n8n's installer strips them
			const built = path.join(REPO_ROOT, 'dist', 'nodes', 'GenGatewayVideo', 'GenGatewayVideo.node.js');
			expect(sha256(fs.readFileSync(path.join(installed, 'dist', 'nodes', 'GenGatewayVideo', 'GenGatewayVideo.node.js')))).toBe(sha256(fs.readFileSync(built)));
			// n8n resolved the registry's name through the namespace's hosts file, never through DNS.
			expect(dns.names()).not.toContain(namespace.registryHost);
		},
		STEP_TIMEOUT,
	);

	it(
		'runs the example from the editor to its mp4 with 0.1.0, and parks a durable wait as `waiting`',
		async () => {
			await expectExampleDelivered(await step(page(), 'run the example', () => runFromEditor(example.id)));

			// The durable workflow, active now that its nodes exist; one production execution parked in the database.
			const saved = await server.rest('GET', `/rest/workflows/${durable.id}`, { cookie });
			const activated = await server.rest('POST', `/rest/workflows/${durable.id}/activate`, {
				cookie,
				body: { versionId: saved.body.data.versionId },
			});
			expect(activated.status).toBe(200);
			await waitForWebhook(server, DURABLE_PATH);
			const response = await fetch(`${server.url}/webhook/${DURABLE_PATH}`, {
				method: 'POST',
				headers: { ...FRESH_CONNECTION, 'content-type': 'application/json' },
				body: JSON.stringify({ prompt: DURABLE_PROMPT }),
			});
			expect(response.status).toBe(200);
			state.parkedAt = Date.now();
			const [parked] = await waitForExecutions(server, cookie, durable.id, (all) => all.length === 1 && all[0].status === 'waiting', 60_000);
			state.durableExecution = parked.id;
		},
		STEP_TIMEOUT,
	);

	it(
		'offers 0.1.1 on the same page once the registry has it, and updates from the editor while the execution waits',
		async () => {
			expect(state.durableExecution).toBeDefined();
			await registry.publish(tarball011);
			expect((await registry.versions(PACKAGE_NAME)).sort()).toEqual(['0.1.0', '0.1.1']);

			await step(page(), 'open Community nodes', () => openCommunityNodes(page(), server.url));
			expect((await readCards(page())).map(sortedNodes)).toEqual([{ name: PACKAGE_NAME, version: '0.1.0', nodes: NODE_NAMES, updateOffered: true }]);
			await page().mouse.move(640, 880);
			await page().screenshot({ path: UPDATE_SCREENSHOT, animations: 'disabled', caret: 'hide' });

			const confirmation = await step(page(), 'update', () => updateFromCard(page(), PACKAGE_NAME, '0.1.1', namesBoth));
			state.updatedAt = Date.now();
			expect(confirmation.title).toBe('Update node package');
			expect(confirmation.text).toMatch(/^Package includes: /);
			for (const name of NODE_NAMES) expect(confirmation.text).toContain(name);
			// n8n names the workflows that use the package's nodes.
			expect(namesBoth(confirmation.text)).toBe(true);
			expect((await readCards(page()))[0]).toMatchObject({ version: '0.1.1', updateOffered: false });

			const manifest = JSON.parse(fs.readFileSync(path.join(installedPackageDir(home.dir), 'package.json'), 'utf8'));
			expect(manifest).toMatchObject({ version: '0.1.1', genGatewayE2eBuild: marker });
			expect(await nodeTypesLoaded()).toEqual(NODE_TYPES);
			// The update came before the resume: the execution still waits in the database.
			const [durableNow] = await listExecutions(server, cookie, durable.id);
			expect({ id: durableNow.id, status: durableNow.status }).toEqual({ id: state.durableExecution, status: 'waiting' });
		},
		STEP_TIMEOUT,
	);

	it(
		'finds the five nodes (Chat Model included) in the "+" panel’s search, and the saved example runs again to its mp4 with 0.1.1',
		async () => {
			await step(page(), 'open the workflow', () => openWorkflow(page(), server.url, searchWorkflowId));
			expect(await step(page(), 'open the "+" panel', () => openNodeCreator(page()))).toBe('What happens next?');
			const results = await step(page(), 'search "Gen Gateway"', () => searchNodes(page(), 'Gen Gateway'));
			expect(results.map((result) => result.type).filter((type) => type.startsWith(`${PACKAGE_NAME}.`)).sort()).toEqual(NODE_TYPES);
			expect(results.filter((result) => result.type.startsWith(`${PACKAGE_NAME}.`)).map((result) => result.name).sort()).toEqual(NODE_NAMES);
			await page().keyboard.press('Escape');
			await nodeCreator(page()).waitFor({ state: 'hidden', timeout: UI_TIMEOUT });

			await expectExampleDelivered(await step(page(), 'run the example again', () => runFromEditor(example.id)));
		},
		STEP_TIMEOUT,
	);

	it(
		'resumes the execution parked before the update, after it, and delivers the mp4 from its one submission',
		async () => {
			expect(state.updatedAt).toBeDefined();
			const [finished] = await waitForExecutions(server, cookie, durable.id, (all) => all.length === 1 && FINISHED.includes(all[0].status), 4 * 60_000);
			const run = await readExecution(server, cookie, finished.id);
			expect({ id: finished.id, status: run.status, error: run.data.resultData.error?.message }).toEqual({
				id: state.durableExecution,
				status: 'success',
				error: undefined,
			});
			const [submitted] = run.data.resultData.runData['Submit Video'][0].data.main[0];
			const taskId = submitted.json.task_id as string;
			const checks = statusChecks(await mock.log(), taskId);
			expect(checks.length).toBe(1);
			// The check ran after the update: by then the files on disk and the loaded nodes were 0.1.1's.
			expect(Date.parse(checks[0].time)).toBeGreaterThan(state.updatedAt!);
			const [done] = run.data.resultData.runData['Check Video'][0].data.main[0];
			expect(done.json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			const bytes = await home.binaryFile(done.binary.data.id);
			expect(bytes.subarray(4, 8)).toEqual(MP4_FTYP);
			expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));
			expect(submissionsIn(await mock.log()).filter((entry) => (entry.body as { prompt?: string })?.prompt === DURABLE_PROMPT)).toHaveLength(1);
		},
		STEP_TIMEOUT,
	);

	it(
		'uninstalls from the card’s menu: the nodes are gone, the workflows stay and show n8n’s missing-node state, n8n stays up',
		async () => {
			await step(page(), 'open Community nodes', () => openCommunityNodes(page(), server.url));
			const confirmation = await step(page(), 'uninstall', () => uninstallFromCard(page(), PACKAGE_NAME, namesBoth));
			expect(confirmation.title).toBe('Uninstall node package');
			expect(namesBoth(confirmation.text)).toBe(true);
			expect(await readCards(page())).toEqual([]);
			expect(await nodeTypesLoaded()).toEqual([]);
			expect(fs.existsSync(installedPackageDir(home.dir))).toBe(false);

			// The workflows are kept, their nodes unchanged.
			for (const workflow of [example, durable]) {
				const saved = await server.rest('GET', `/rest/workflows/${workflow.id}`, { cookie });
				expect(saved.status).toBe(200);
				const types = (saved.body.data.nodes as Array<{ type: string }>).map((node) => node.type);
				expect(types).toEqual(workflow.nodes.map((node) => node.type));
			}

			// The editor opens the example and marks its Gen Gateway node as missing.
			await step(page(), 'open the example', () => openWorkflow(page(), server.url, example.id));
			const node = page().locator('[data-test-id="canvas-node"][data-node-name="Generate Video"]');
			await node.waitFor({ timeout: UI_TIMEOUT });
			// n8n's "Install this node to use it" marker, on our node only (the Manual Trigger is n8n's own).
			await node.locator('[data-test-id="node-not-installed"]').waitFor({ timeout: UI_TIMEOUT });
			expect(await page().locator('[data-test-id="node-not-installed"]').count()).toBe(1);
			// The credential is kept too.
			const credentials = await server.rest('GET', '/rest/credentials', { cookie });
			expect((credentials.body.data as Array<{ id: string }>).map((credential) => credential.id)).toContain(EXAMPLE_CREDENTIAL.id);

			const health = await fetch(`${server.url}/healthz`, { headers: FRESH_CONNECTION });
			expect(health.status).toBe(200);
			expect(server.process.exitCode).toBeNull();
		},
		STEP_TIMEOUT,
	);

	it(
		'installs again from the same page: the latest version, its nodes loaded',
		async () => {
			await step(page(), 'open Community nodes', () => openCommunityNodes(page(), server.url));
			await step(page(), 'fill in the install dialog', () => fillInstallDialog(page(), PACKAGE_NAME));
			const card = await step(page(), 'install', () => confirmInstall(page(), PACKAGE_NAME));
			expect(sortedNodes(card)).toEqual<PackageCard>({ name: PACKAGE_NAME, version: '0.1.1', nodes: NODE_NAMES, updateOffered: false });
			expect(await nodeTypesLoaded()).toEqual(NODE_TYPES);
			// The example opens as before: no node marked missing.
			await step(page(), 'open the example', () => openWorkflow(page(), server.url, example.id));
			await page().locator('[data-test-id="canvas-node"][data-node-name="Generate Video"]').waitFor({ timeout: UI_TIMEOUT });
			expect(await page().locator('[data-test-id="node-not-installed"]').count()).toBe(0);
			// The browser never fetched from the registry (n8n did); what else it tried (the Community nodes page asks
			// a package search service for the number of community packages) was aborted and is printed at the end.
			expect(browserEscapes.filter((url) => new URL(url).hostname === namespace.registryHost)).toEqual([]);
		},
		STEP_TIMEOUT,
	);
});
