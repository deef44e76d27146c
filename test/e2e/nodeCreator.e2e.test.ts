// Finding the package's nodes in n8n's editor (issue 10, point 6), in a real Chromium against a real n8n 2.41.1
// (1.123.81 with GEN_GATEWAY_E2E_N8N=1), with the package installed as n8n installs a community package. After a
// trigger, the "+" panel ("What happens next?") must find each node by its display name and add it from the result,
// and the words a user would try ("video", "image", "chat") must find the matching node. n8n's search drops every
// node whose codex category is "AI" (without the "Root Nodes" subcategory) before it matches names
// (`filterOutAiNodes` in the editor's node creator), so a codex with "AI" makes every search here miss our nodes.
// Also: a Video node added from each of its actions shows that operation's display name under it on the canvas.
// Time: about 75 s: one n8n start and one Chromium, then a search and an add in the editor for each node and word,
// and a Video node added from each of its actions (about 50 s of editor work on two cores).
import type { INodePropertyOptions, INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import { GenGatewayModels } from '../../nodes/GenGatewayModels/GenGatewayModels.node';
import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';
import { launchChromium, type BrowserSession } from './browser/chromium';
import { ndv, openWorkflow, signIn, UI_TIMEOUT } from './browser/editor';
import { addFromResults, nodeCreator, openNodeCreator, searchNodes } from './browser/nodeCreator';
import { FAILURE_DIR, step } from './browser/screenshots';
import { DEFAULT_OWNER, createN8nHome, linearWorkflow, nodeType, type N8nHome, type N8nServer } from './n8n';

const SETUP_TIMEOUT = 20 * 60_000; // a first run installs n8n (minutes); later: n8n start about 20 s, Chromium 2 s
const TEST_TIMEOUT = 4 * 60_000;

interface PackageNode {
	displayName: string;
	type: string;
	/** The action of the node's default operation, as the panel lists it. */
	action: string;
	/** The operation options: value, display name and action. */
	operations: INodePropertyOptions[];
}

function packageNode(node: INodeType): PackageNode {
	const { displayName, name, properties } = node.description;
	const operation = properties.find((property) => property.name === 'operation');
	const operations = (operation?.options ?? []) as INodePropertyOptions[];
	const action = operations.find((option) => option.value === operation?.default)?.action;
	if (!action) throw new Error(`${name} has no action for its default operation`);
	return { displayName, type: nodeType(name), action, operations };
}

const [CHAT, IMAGE, MODELS, VIDEO] = [
	new GenGatewayChat(),
	new GenGatewayImage(),
	new GenGatewayModels(),
	new GenGatewayVideo(),
].map(packageNode);
const VIDEO_DEFAULT_MODEL = new GenGatewayVideo().description.properties.find((property) => property.name === 'model')!
	.default as string;

describe('the "+" panel finds the package’s nodes (real Chromium)', () => {
	let home: N8nHome;
	let server: N8nServer;
	let browser: BrowserSession;
	let workflowId: string;

	/** The "+" panel after the workflow's trigger, searching nothing yet; returns its heading. */
	const openPanel = async (): Promise<string> => {
		const page = browser.page;
		// Left over from a previous test: the node's panel or the "+" panel. Escape closes either; else load again.
		for (let i = 0; i < 3 && ((await ndv(page).isVisible()) || (await nodeCreator(page).isVisible())); i++) {
			await page.keyboard.press('Escape');
			await page.waitForTimeout(300);
		}
		if ((await ndv(page).isVisible()) || (await nodeCreator(page).isVisible())) {
			await openWorkflow(page, server.url, workflowId);
		}
		return await openNodeCreator(page);
	};

	beforeAll(async () => {
		home = await createN8nHome({ build: true, logLevel: 'info' });
		server = await home.startServer();
		await server.ownerSession(); // creates the owner the browser signs in as
		workflowId = await server.importWorkflow(linearWorkflow('Find the nodes', []));
		browser = await launchChromium({ width: 1280, height: 900 });
		await step(browser.page, 'sign in', () => signIn(browser.page, server.url, DEFAULT_OWNER.email, DEFAULT_OWNER.password));
		await step(browser.page, 'open the workflow', () => openWorkflow(browser.page, server.url, workflowId));
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await browser?.close();
		await server?.stop();
		await home?.dispose();
		// eslint-disable-next-line no-console
		console.log(`node creator e2e: failure screenshots go to ${FAILURE_DIR}`);
	});

	it.each([MODELS, CHAT, IMAGE, VIDEO])(
		'finds $displayName by its name, first, and adds it from the result',
		async (node) => {
			const page = browser.page;
			const heading = await step(page, 'open the "+" panel', openPanel);
			expect(heading).toBe('What happens next?');

			const results = await step(page, `search "${node.displayName}"`, () => searchNodes(page, node.displayName));
			expect(results[0]).toEqual({ type: node.type, name: node.displayName });

			const added = await step(page, `add ${node.displayName} as "${node.action}"`, () =>
				addFromResults(page, node.type, node.action),
			);
			// n8n opens the new node's panel, named as the node's defaults say.
			await ndv(page).waitFor({ timeout: UI_TIMEOUT });
			expect(added).toMatch(new RegExp(`^${node.displayName}\\d*$`));
		},
		TEST_TIMEOUT,
	);

	it.each([
		['video', VIDEO],
		['image', IMAGE],
		['chat', CHAT],
	])('finds the node for the word "%s"', async (word, node) => {
		const page = browser.page;
		await step(page, 'open the "+" panel', openPanel);
		const results = await step(page, `search "${word}"`, () => searchNodes(page, word));
		expect(results).toContainEqual({ type: node.type, name: node.displayName });
	}, TEST_TIMEOUT);

	it(
		'shows each Video operation’s name under a Video node added from that action',
		async () => {
			const page = browser.page;
			// What the canvas shows on each new node: its name, the subtitle (and the labels of several outputs).
			const shown: Record<string, string[]> = {};
			const expected: Record<string, unknown> = {};
			for (const operation of VIDEO.operations) {
				const value = String(operation.value);
				await step(page, 'open the "+" panel', openPanel);
				await step(page, `search "${VIDEO.displayName}"`, () => searchNodes(page, VIDEO.displayName));
				const name = await step(page, `add "${operation.action}"`, () =>
					addFromResults(page, VIDEO.type, operation.action ?? ''),
				);
				await ndv(page).waitFor({ timeout: UI_TIMEOUT });
				await page.keyboard.press('Escape');
				await ndv(page).waitFor({ state: 'hidden', timeout: UI_TIMEOUT });
				const onCanvas = page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);
				shown[value] = (await onCanvas.innerText()).split('\n').map((line) => line.trim()).filter(Boolean);
				const subtitle = value === 'generate' ? `Generate: ${VIDEO_DEFAULT_MODEL}` : operation.name;
				expected[value] = expect.arrayContaining([name, subtitle]);
			}
			expect(shown).toEqual(expected);
		},
		TEST_TIMEOUT,
	);
});
