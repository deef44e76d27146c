// Screenshots: of the node panel for the docs, and of the whole page when a step fails (its path goes into the error).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Page } from 'playwright-core';

import { nodeParameters, renderedFrames } from './editor';

/** Where failure screenshots go (kept after the run; the error message names the file). */
export const FAILURE_DIR = process.env.GEN_GATEWAY_E2E_ARTIFACTS ?? path.join(os.tmpdir(), 'gen-gateway-e2e-screenshots');

/** Saves a full-page PNG named after the step and returns its path (never throws: it runs while reporting a failure). */
export async function failureScreenshot(page: Page, step: string): Promise<string> {
	const file = path.join(FAILURE_DIR, `${new Date().toISOString().replace(/[:.]/g, '-')}-${step.replace(/[^\w.-]+/g, '_')}.png`);
	try {
		fs.mkdirSync(FAILURE_DIR, { recursive: true });
		await page.screenshot({ path: file, fullPage: true, timeout: 30_000 });
		return file;
	} catch (error) {
		return `(no screenshot: ${(error as Error).message.split('\n')[0]})`;
	}
}

/** Runs one step; if it fails, the error names the step and a screenshot of the page at that moment. */
export async function step<T>(page: Page, name: string, run: () => Promise<T>): Promise<T> {
	try {
		return await run();
	} catch (error) {
		const shot = await failureScreenshot(page, name);
		const note = `\n[editor e2e] step "${name}" failed; screenshot: ${shot}; page: ${page.url()}`;
		if (error instanceof Error) {
			// jest prints the stack, which already holds the message: extend both.
			error.message += note;
			if (error.stack) error.stack = `${error.stack.split('\n')[0]}${note}\n${error.stack.split('\n').slice(1).join('\n')}`;
			throw error;
		}
		throw new Error(`${String(error)}${note}`);
	}
}

/**
 * A PNG of the node's panel (header, tabs and every shown parameter), cropped below the last parameter.
 * The viewport must be tall enough for the panel not to scroll.
 */
export async function panelScreenshot(page: Page, file: string): Promise<Buffer> {
	// No hover or focus decorations (the Fixed/Expression toggles, a focus ring) in the picture.
	await page.mouse.move(0, 0);
	await page.evaluate(() => (globalThis as unknown as { document: { activeElement?: { blur?(): void } } }).document.activeElement?.blur?.());
	await renderedFrames(page);
	const panel = page.locator('.node-settings').filter({ has: nodeParameters(page) });
	const panelBox = await panel.boundingBox();
	const items = nodeParameters(page).locator('[data-test-id="parameter-item"]').filter({ visible: true });
	const lastBox = await items.last().boundingBox();
	if (!panelBox || !lastBox) throw new Error('the node panel is not on screen');
	const bottom = Math.min(panelBox.y + panelBox.height, lastBox.y + lastBox.height + 16);
	fs.mkdirSync(path.dirname(file), { recursive: true });
	return await page.screenshot({
		path: file,
		clip: { x: panelBox.x, y: panelBox.y, width: panelBox.width, height: bottom - panelBox.y },
		animations: 'disabled',
		caret: 'hide',
	});
}
