// The saved-workflow fixtures (test/fixtures/workflows/<version>/) in a real n8n 2.41.1 and its editor in Chromium
// (2.x only: the fixtures are saved by 2.41.1's editor and name its AI Agent 3.1): n8n knows every node type and version they name, and each one,
// opened in the editor and saved again (Ctrl+S, as a user does), comes back with the very parameters, types, versions
// and credentials the fixture holds. That is what makes the fixtures "as the editor saves them"; the jest test
// (test/integration/savedWorkflows.test.ts) then holds the current code to them in seconds.
// Time: about 70 s: one n8n start and one Chromium, then for each fixture workflow an open, a save and two REST reads
// (about 4 s each); most of the rest is the build. The imports go through the server's REST API.
import { launchChromium, type BrowserSession } from './browser/chromium';
import { UI_TIMEOUT, signIn } from './browser/editor';
import { step } from './browser/screenshots';
import { DEFAULT_OWNER, createN8nHome, type N8nHome, type N8nServer } from './n8n';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { CREDENTIAL } from '../support/savedWorkflows/build';
import { fixtureVersions, loadFixtures } from '../support/savedWorkflows/check';
import type { SavedNode } from '../support/savedWorkflows/editor';

const SETUP_TIMEOUT = 20 * 60_000;
const TEST_TIMEOUT = 3 * 60_000;
const SAVE_TIMEOUT = 30_000;

const fixtures = fixtureVersions().flatMap((version) => loadFixtures(version));

/** What a save may not change: everything of a node but its place on the canvas. */
const comparable = (nodes: SavedNode[]) =>
	nodes
		.map(({ name, type, typeVersion, parameters, credentials }) => ({ name, type, typeVersion, parameters, credentials }))
		.sort((a, b) => a.name.localeCompare(b.name));

/** A fixture's nodes as imported: the same, but each credential named by the id n8n gave it on import. */
const imported = (nodes: SavedNode[], server: N8nServer) =>
	nodes.map((node) =>
		node.credentials
			? {
					...node,
					credentials: Object.fromEntries(
						Object.entries(node.credentials).map(([type, ref]) => [type, { ...ref, id: server.credentialId(ref.id) }]),
					),
				}
			: node,
	);

describe('saved-workflow fixtures in n8n and its editor (real Chromium)', () => {
	const apiKey = 'saved-workflows-e2e-key-0123456789';
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer;
	let browser: BrowserSession;
	let cookie: string;

	const stored = async (id: string): Promise<{ versionId: string; nodes: SavedNode[] }> => {
		const response = await server.rest('GET', `/rest/workflows/${id}`, { cookie });
		if (response.status !== 200) throw new Error(`GET /rest/workflows/${id}: ${response.status}`);
		return response.body.data as { versionId: string; nodes: SavedNode[] };
	};

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true, logLevel: 'info' });
		server = await home.startServer();
		cookie = await server.ownerSession();
		// Imported through the server's REST API as the editor imports: the workflows keep their ids (2.x), the
		// credentials get n8n's (imported() maps the fixtures' references to them).
		await server.importCredentials([
			{ ...CREDENTIAL, type: 'genGatewayApi', data: { baseUrl: mock.url, apiKey } },
			{ id: 'GgFixtureOpenAi1', name: 'Gen Gateway as OpenAI', type: 'openAiApi', data: { apiKey, url: `${mock.url}/v1` } },
		]);
		await server.importWorkflows(fixtures.map((fixture) => fixture.workflow as unknown as Record<string, unknown>));
		browser = await launchChromium({ width: 1600, height: 1000 });
		await step(browser.page, 'sign in', () => signIn(browser.page, server.url, DEFAULT_OWNER.email, DEFAULT_OWNER.password));
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await browser?.close();
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	it('n8n knows every node type and version the fixtures name (our four nodes, their tool variants, n8n\'s own)', async () => {
		const response = await server.rest('GET', '/types/nodes.json', { cookie });
		const known = new Set(
			(response.body as Array<{ name: string; version: number | number[] }>).flatMap((type) =>
				([] as number[]).concat(type.version).map((version) => `${type.name}@${version}`),
			),
		);
		const named = [...new Set(fixtures.flatMap((fixture) => fixture.workflow.nodes.map((node) => `${node.type}@${node.typeVersion}`)))];
		expect(named.filter((name) => !known.has(name))).toEqual([]);
		expect(named.filter((name) => name.startsWith('n8n-nodes-gen-gateway.')).length).toBeGreaterThanOrEqual(8);
	});

	it.each(fixtures.map((fixture) => [`${fixture.version}/${fixture.file}`, fixture] as const))(
		'%s: imported, opened in the editor and saved again, its nodes are exactly the fixture\'s',
		async (_, fixture) => {
			const id = fixture.workflow.id;
			const before = await stored(id);
			expect(comparable(before.nodes)).toEqual(comparable(imported(fixture.workflow.nodes, server)));

			const page = browser.page;
			await step(page, `open ${fixture.file} and save it`, async () => {
				// Each workflow is opened once, so n8n's "Editing in another tab" lock (openWorkflow's wait) never shows.
				await page.goto(`${server.url}/workflow/${id}`, { timeout: UI_TIMEOUT });
				await page.locator('[data-test-id="canvas-node"]').first().waitFor({ timeout: UI_TIMEOUT });
				// A click on empty canvas gives the canvas the keyboard; Ctrl+S is the editor's Save.
				await page.mouse.click(1500, 950);
				const deadline = Date.now() + SAVE_TIMEOUT;
				let pressed = 0;
				while ((await stored(id)).versionId === before.versionId) {
					if (Date.now() > deadline) throw new Error(`the editor did not save ${fixture.file} (${pressed} Ctrl+S)`);
					if (pressed < 3) {
						await page.keyboard.press('Control+s');
						pressed++;
					}
					await page.waitForTimeout(300);
				}
			});
			const after = await stored(id);
			expect(after.versionId).not.toBe(before.versionId);
			expect(comparable(after.nodes)).toEqual(comparable(imported(fixture.workflow.nodes, server)));
		},
		TEST_TIMEOUT,
	);
});
