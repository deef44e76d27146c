// n8n's node creator (the "+" panel, "What happens next?") as a user drives it: open it, type into its search, read
// the results, add a node from one. Same data-test-id attributes on n8n 1.123 and 2.41.
import type { Locator, Page } from 'playwright-core';

import { renderedFrames, UI_TIMEOUT } from './editor';

export const nodeCreator = (page: Page): Locator => page.locator('[data-test-id="node-creator"]');
const searchBar = (page: Page): Locator => page.locator('[data-test-id="node-creator-search-bar"]');
/** Items of the panel's current list of one kind ("node" results, a node's "action"s). */
const items = (page: Page, kind: 'node' | 'action'): Locator =>
	nodeCreator(page).locator(`[data-test-id="item-iterator-item"][data-keyboard-nav-type="${kind}"]`);

export interface SearchResult {
	/** The node type, e.g. `n8n-nodes-gen-gateway.genGatewayVideo`. */
	type: string;
	/** The name the result shows. */
	name: string;
}

/** Opens the "+" panel from the canvas's "+" button and returns its heading ("What happens next?" after a trigger). */
export async function openNodeCreator(page: Page): Promise<string> {
	await page.locator('[data-test-id="node-creator-plus-button"]').click({ timeout: UI_TIMEOUT });
	await searchBar(page).waitFor({ timeout: UI_TIMEOUT });
	const heading = nodeCreator(page).getByText(/^(What happens next\?|What triggers this workflow\?)$/);
	await heading.first().waitFor({ timeout: UI_TIMEOUT });
	return (await heading.first().innerText()).trim();
}

/** A result's node type: its keyboard-navigation id is `<type>-<uuid>`. */
function resultType(navId: string): string {
	return navId.replace(/-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, '');
}

async function readResults(page: Page): Promise<SearchResult[]> {
	return await items(page, 'node').evaluateAll((elements) =>
		elements.map((item) => ({
			navId: item.getAttribute('data-keyboard-nav-id') ?? '',
			name: (item.querySelector('[data-test-id="node-creator-item-name"]')?.textContent ?? '').trim(),
		})),
	).then((rows) => rows.map((row) => ({ type: resultType(row.navId), name: row.name })));
}

/**
 * Types a query into the panel's search as a user would and returns the node results once the list has settled
 * (the same list in two reads 300 ms apart, or "No results"): [] when n8n says "No results".
 */
export async function searchNodes(page: Page, query: string): Promise<SearchResult[]> {
	const bar = searchBar(page);
	await bar.fill('');
	await bar.pressSequentially(query, { delay: 20 });
	const noResults = nodeCreator(page).locator('[data-test-id="node-creator-no-results"]');
	const deadline = Date.now() + UI_TIMEOUT;
	let previous = '';
	while (Date.now() < deadline) {
		await renderedFrames(page);
		if (await noResults.isVisible()) return [];
		const results = await readResults(page);
		const key = JSON.stringify(results);
		if (results.length > 0 && key === previous) return results;
		previous = key;
		await page.waitForTimeout(300);
	}
	throw new Error(`the search for "${query}" showed neither results nor "No results"`);
}

/**
 * Adds a node from the search results: clicks the result of that type, then the named one of the node's actions
 * (n8n lists them next, on both lines, even for a node with one action). Resolves once the node is on the canvas
 * (one more node of that type than before); returns its name there.
 */
export async function addFromResults(page: Page, type: string, action: string): Promise<string> {
	const onCanvas = page.locator(`[data-test-id="canvas-node"][data-node-type="${type}"]`);
	const before = await onCanvas.count();
	const result = nodeCreator(page).locator(
		`[data-test-id="item-iterator-item"][data-keyboard-nav-type="node"][data-keyboard-nav-id^="${type}-"]`,
	);
	if ((await result.count()) !== 1) throw new Error(`the results hold ${await result.count()} entries of ${type}`);
	await result.click({ timeout: UI_TIMEOUT });
	const exact = new RegExp(`^\\s*${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
	const actionItem = items(page, 'action').filter({
		has: page.locator('[data-test-id="node-creator-item-name"]', { hasText: exact }),
	});
	await actionItem.first().waitFor({ timeout: UI_TIMEOUT });
	if ((await actionItem.count()) !== 1) throw new Error(`${type} lists ${await actionItem.count()} actions "${action}"`);
	await actionItem.click({ timeout: UI_TIMEOUT });
	await onCanvas.nth(before).waitFor({ timeout: UI_TIMEOUT });
	return (await onCanvas.nth(before).getAttribute('data-node-name')) ?? '';
}
