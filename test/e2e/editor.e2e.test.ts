// The Video node in n8n's editor (issue 5), in a real Chromium against a real n8n 2.41.1 (1.123.81 with
// GEN_GATEWAY_E2E_N8N=1): for each of the 11 models, picked by clicking the Model dropdown, the parameter panel shows
// the fields, lists, duration bounds and defaults the capability matrix gives; the credential dialog's test succeeds
// with the right key and fails with a wrong one. Screenshots of three contrasting panels go to docs/screenshots/ with
// GEN_GATEWAY_UPDATE_SCREENSHOTS=1 (npm run docs:screenshots).
// Time: about 75 s: one n8n start and one Chromium, then the Video panel for each of the 11 models (picked in the
// dropdown, read, compared with the matrix) and the credential dialog's test with two keys.
import * as path from 'path';
import type { Page } from 'playwright-core';

import { GenGatewayApi } from '../../credentials/GenGatewayApi.credentials';
import { findVideoModel, VIDEO_MODELS, VIDEO_MODEL_IDS } from '../../nodes/GenGatewayVideo/model/matrix';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { launchChromium, type BrowserSession } from './browser/chromium';
import {
	FAILURE_TEXT,
	SUCCESS_TEXT,
	closeDialog,
	credentialDialog,
	openNodeCredential,
	retryTest,
	saveWithApiKey,
} from './browser/credentialDialog';
import {
	openNode,
	openWorkflow,
	parameterInput,
	parameterIssues,
	pickOption,
	readOptions,
	shownOption,
	signIn,
	visibleLabels,
} from './browser/editor';
import { FAILURE_DIR, panelScreenshot, step } from './browser/screenshots';
import { expectedPanel, readVideoPanel, splitLabels, type VideoPanel } from './browser/videoPanel';
import {
	DEFAULT_OWNER,
	createN8nHome,
	e2eMajor,
	linearWorkflow,
	nodeType,
	randomId,
	type CredentialImport,
	type N8nHome,
	type N8nServer,
} from './n8n';

const SETUP_TIMEOUT = 20 * 60_000; // a first run installs n8n (minutes); later: n8n start about 20 s, Chromium 2 s
const TEST_TIMEOUT = 4 * 60_000;
const NODE_NAME = 'Video';
/** Three contrasting panels: many references and no frames; few of everything and no audio; audio off by default. */
const SCREENSHOT_MODELS = ['sd_2.5_discount', 'gk_1.5', 'sdx_2.0_nsfw_c1'];
const DOCS_SCREENSHOTS = path.resolve(__dirname, '../../docs/screenshots');

describe('Video node in n8n’s editor (real Chromium)', () => {
	const apiKey = `sk-e2e-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer;
	let browser: BrowserSession;
	let workflowId: string;
	const timings: Record<string, number> = {};

	const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
		const started = Date.now();
		try {
			return await run();
		} finally {
			timings[what] = Date.now() - started;
		}
	};

	/**
	 * The one tab, showing the Video node's panel: kept from the previous test when it shows it (and no dialog),
	 * otherwise the workflow is loaded again (discarding unsaved changes) and the node opened.
	 */
	const openVideoPanel = async (): Promise<Page> => {
		const page = browser.page;
		if ((await parameterInput(page, 'model').isVisible()) && !(await credentialDialog(page).isVisible())) return page;
		const opened = Object.keys(timings).filter((key) => key.startsWith('open the panel')).length + 1;
		await timed(`open the panel #${opened}`, () =>
			step(page, 'open the workflow and the Video node', async () => {
				await openWorkflow(page, server.url, workflowId);
				await openNode(page, NODE_NAME);
			}),
		);
		return page;
	};

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true, logLevel: 'info' });
		const credential: CredentialImport = {
			id: randomId(),
			name: 'Gen Gateway (mock)',
			type: 'genGatewayApi',
			data: { baseUrl: mock.url, apiKey },
		};
		server = await timed('n8n start', () => home.startServer());
		await server.ownerSession(); // creates the owner the browser signs in as
		// Imported through the server's REST API as the editor does; n8n gives the credential its id.
		credential.id = await server.importCredential(credential);
		// Opened on the last model, so the first model of the matrix is also reached by a real pick.
		workflowId = await server.importWorkflow(
			linearWorkflow('Video in the editor', [
				{
					name: NODE_NAME,
					type: nodeType('genGatewayVideo'),
					parameters: { operation: 'generate', model: VIDEO_MODEL_IDS[VIDEO_MODEL_IDS.length - 1], prompt: 'A red fox in snow' },
					credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
				},
			]),
		);
		// Tall enough for the whole Generate panel without scrolling; 2x pixels for readable docs screenshots.
		browser = await timed('Chromium launch', () => launchChromium({ width: 1280, height: 1800 }, 2));
		await timed('sign in', () =>
			step(browser.page, 'sign in', () => signIn(browser.page, server.url, DEFAULT_OWNER.email, DEFAULT_OWNER.password)),
		);
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await browser?.close();
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
		// eslint-disable-next-line no-console
		console.log(`editor e2e timings (ms): ${JSON.stringify(timings)}; failure screenshots go to ${FAILURE_DIR}`);
	});

	it(
		'offers the 11 models of the matrix in the Model dropdown, each with its range and resolutions',
		async () => {
			const page = await openVideoPanel();
			const options = await step(page, 'read the Model dropdown', () => readOptions(page, 'model'));

			expect(options.map((option) => option.name)).toEqual([...VIDEO_MODEL_IDS]);
			for (const model of VIDEO_MODELS) {
				const description = options.find((option) => option.name === model.id)?.description ?? '';
				expect({ model: model.id, description }).toEqual({
					model: model.id,
					description: expect.stringContaining(`${model.duration.min}–${model.duration.max} s, ${model.resolutions.join('/')}`),
				});
			}
		},
		TEST_TIMEOUT,
	);

	it(
		'shows, for each model picked in the dropdown, the fields, lists, duration bounds and defaults of the matrix',
		async () => {
			const page = await openVideoPanel();
			const shown: Record<string, VideoPanel> = {};
			const expected: Record<string, VideoPanel> = {};
			const otherLabels: Record<string, string[]> = {};

			await timed('11 models read', async () => {
				for (const model of VIDEO_MODELS) {
					expected[model.id] = expectedPanel(model);
					await step(page, `pick ${model.id}`, async () => {
						await pickOption(page, 'model', model.id);
						await settledFields(page, expected[model.id].fields);
					});
					if (SCREENSHOT_MODELS.includes(model.id)) {
						await step(page, `screenshot ${model.id}`, () => saveScreenshot(page, model.id));
					}
					const { panel, others } = await step(page, `read the panel of ${model.id}`, () => readVideoPanel(page));
					shown[model.id] = panel;
					otherLabels[model.id] = others;
				}
			});

			await step(page, 'compare with the matrix', async () => {
				expect(shown).toEqual(expected);
				// The rest of the panel does not depend on the model.
				const first = otherLabels[VIDEO_MODEL_IDS[0]];
				expect(first).toEqual(expect.arrayContaining(['model: Model', 'prompt: Prompt']));
				for (const id of VIDEO_MODEL_IDS) expect({ model: id, others: otherLabels[id] }).toEqual({ model: id, others: first });
			});
		},
		TEST_TIMEOUT,
	);

	it(
		'flags a resolution and an aspect ratio kept from a model that offers them on a model that does not',
		async () => {
			// n8n keeps a parameter's value when the model changes (every variant has the same name); the per-model option
			// lists are what make the editor flag a value the new model lacks.
			const from = findVideoModel('sd_2.5_discount')!;
			const to = findVideoModel('gk_video')!;
			const resolution = from.resolutions.find((value) => !to.resolutions.includes(value))!;
			const ratio = from.aspectRatios.find((value) => !to.aspectRatios.includes(value))!;
			expect([resolution, ratio]).not.toContain(undefined);

			const page = await openVideoPanel();
			const flagged = await step(page, `carry ${resolution} and ${ratio} from ${from.id} to ${to.id}`, async () => {
				await pickOption(page, 'model', from.id);
				await pickOption(page, 'resolution', resolution);
				await pickOption(page, 'aspectRatio', ratio);
				const before = { resolution: await parameterIssues(page, 'resolution'), aspectRatio: await parameterIssues(page, 'aspectRatio') };
				await pickOption(page, 'model', to.id);
				await settledFields(page, expectedPanel(to).fields);
				return {
					before,
					shown: { resolution: await shownOption(page, 'resolution'), aspectRatio: await shownOption(page, 'aspectRatio') },
					after: { resolution: await parameterIssues(page, 'resolution'), aspectRatio: await parameterIssues(page, 'aspectRatio') },
				};
			});

			expect(flagged).toEqual({
				before: { resolution: [], aspectRatio: [] },
				shown: { resolution, aspectRatio: ratio },
				after: {
					resolution: [`The value "${resolution}" is not supported!`],
					aspectRatio: [`The value "${ratio}" is not supported!`],
				},
			});
		},
		TEST_TIMEOUT,
	);

	it(
		'tests the credential from its dialog: success with the right key, n8n’s failure text with a wrong one',
		async () => {
			const page = await openVideoPanel();
			const lastSeq = async () => Math.max(0, ...(await mock.log()).map((entry) => entry.seq));
			const modelCallsSince = async (seq: number) =>
				(await mock.log()).filter((entry) => entry.seq > seq && entry.path.startsWith('/v1/models'));

			const opened = await step(page, 'open the credential', () => openNodeCredential(page, 'success'));
			expect(opened.banner).toEqual({ outcome: 'success', text: expect.stringContaining(SUCCESS_TEXT) });
			const dialog = opened.dialog;

			let seq = await lastSeq();
			const retried = await step(page, 'test again (Retry)', () => retryTest(page, dialog, 'success'));
			expect(retried).toEqual({ outcome: 'success', text: expect.stringContaining(SUCCESS_TEXT) });
			// The click really tested against the service, with the key.
			expect((await modelCallsSince(seq)).map((entry) => entry.authorized)).toEqual([true]);
			// The dialog never holds the key itself (n8n sends a placeholder for saved secrets).
			expect((await page.content()).includes(apiKey)).toBe(false);

			seq = await lastSeq();
			const wrong = await step(page, 'save a wrong key', () => saveWithApiKey(page, dialog, `sk-wrong-${randomId(20)}`, 'failure'));
			expect(wrong.outcome).toBe('failure');
			expect(wrong.text).toMatch(FAILURE_TEXT);
			// The service answers a wrong key with 403 (interface, section 3): n8n 2.x shows the credential's own
			// explanation of it, n8n 1.x its generic text.
			expect(wrong.text).toContain(refusedKeyText());
			expect((await modelCallsSince(seq)).map((entry) => [entry.authorized, entry.status])).toEqual([[false, 403]]);

			const fixed = await step(page, 'save the right key again', () => saveWithApiKey(page, dialog, apiKey, 'success'));
			expect(fixed).toEqual({ outcome: 'success', text: expect.stringContaining(SUCCESS_TEXT) });
			await step(page, 'close the dialog', () => closeDialog(dialog));
		},
		TEST_TIMEOUT,
	);
});

/** Waits (up to 15 s) until the model-dependent labels are the expected ones; a wrong panel is then read and reported. */
async function settledFields(page: Page, expectedFields: string[]): Promise<void> {
	const deadline = Date.now() + 15_000;
	while (Date.now() < deadline) {
		const { fields } = splitLabels(await visibleLabels(page));
		if (JSON.stringify(fields) === JSON.stringify(expectedFields)) return;
		await page.waitForTimeout(250);
	}
}

/** Docs screenshots with GEN_GATEWAY_UPDATE_SCREENSHOTS=1; otherwise next to the failure screenshots. */
async function saveScreenshot(page: Page, modelId: string): Promise<void> {
	const folder = process.env.GEN_GATEWAY_UPDATE_SCREENSHOTS === '1' ? DOCS_SCREENSHOTS : FAILURE_DIR;
	const png = await panelScreenshot(page, path.join(folder, `video-node-${modelId}.png`));
	expect(png.subarray(1, 4).toString()).toBe('PNG');
}

/** What the credential dialog says about a refused key (403) on the n8n under test. */
function refusedKeyText(): string {
	if (e2eMajor() === 1) return 'Forbidden - perhaps check your credentials?';
	const rule = new GenGatewayApi().test.rules?.find(
		(candidate) => candidate.type === 'responseCode' && candidate.properties.value === 403,
	);
	if (!rule) throw new Error('the credential test has no rule for 403');
	return rule.properties.message;
}
