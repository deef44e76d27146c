// An AI Agent's run as n8n's editor shows it: the execution's canvas, and (n8n 2.x) the logs panel with the chat,
// the agent's sub-runs and one sub-run's input and output. For the README's screenshot of the agent example.
import type { Locator, Page } from 'playwright-core';

import { renderedFrames, UI_TIMEOUT } from './editor';

const shown = async (locator: Locator, timeout = 5_000): Promise<boolean> =>
	await locator.waitFor({ timeout }).then(
		() => true,
		() => false,
	);

/**
 * Opens an execution and waits until its canvas shows every named node (n8n 2.x draws it in the page, 1.x in an
 * iframe preview). Returns where the canvas is.
 */
export async function openExecution(page: Page, baseUrl: string, workflowId: string, executionId: string, nodes: string[]): Promise<Page | ReturnType<Page['frameLocator']>> {
	await page.goto(`${baseUrl}/workflow/${workflowId}/executions/${executionId}`, { timeout: UI_TIMEOUT });
	const node = (root: Page | ReturnType<Page['frameLocator']>, name: string) =>
		root.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);
	const frame = page.frameLocator('iframe').first();
	const deadline = Date.now() + UI_TIMEOUT;
	// Playwright cannot wait on "this or that frame's" locator at once: look at both in turn.
	for (;;) {
		const root = (await page.locator('[data-test-id="canvas-node"]').count()) > 0 ? page : (await frame.locator('[data-test-id="canvas-node"]').count()) > 0 ? frame : undefined;
		if (root) {
			for (const name of nodes) await node(root, name).waitFor({ timeout: UI_TIMEOUT });
			return root;
		}
		if (Date.now() > deadline) throw new Error('the execution shows no canvas, in the page or in an iframe');
		await page.waitForTimeout(500);
	}
}

/**
 * Best effort, for the picture only (n8n 2.x's editor; absent elements are skipped): closes the "Production
 * Checklist" popover, opens the logs panel, makes it taller, selects one sub-run and shows its output as JSON.
 */
export async function showSubRun(page: Page, subRun: string): Promise<void> {
	const close = page.locator('[data-test-id="suggested-actions-close"]');
	if (await shown(close, 3_000)) await close.click();
	const header = page.locator('[data-test-id="logs-overview-header"]');
	if (!(await shown(header))) return;
	await header.click();
	const entry = page.locator('[data-test-id="logs-overview-body"]').getByText(subRun, { exact: false }).first();
	if (!(await shown(entry, 15_000))) return;
	const handle = page.locator('[data-test-id="logs-panel"] [data-test-id="resize-handle"]').first();
	const box = (await shown(handle)) ? await handle.boundingBox() : null;
	if (box) {
		await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
		await page.mouse.down();
		await page.mouse.move(box.x + box.width / 2, Math.round(page.viewportSize()!.height / 2), { steps: 8 });
		await page.mouse.up();
	}
	await entry.click();
	const json = page.locator('[data-test-id="log-details-output"] [data-test-id="radio-button-json"]');
	if (await shown(json)) await json.click();
	await page.mouse.move(0, 0);
	await renderedFrames(page);
}
