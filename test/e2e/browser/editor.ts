// n8n's editor (1.123) as a user drives it: sign in, open a workflow, open a node, pick from a dropdown, read what
// the parameter panel shows. Selectors are n8n's own data-test-id attributes; every step waits on a selector.
import type { Locator, Page } from 'playwright-core';

import { timed } from '../../timing/phases';

/** Waits long enough for n8n's editor on two busy cores (a first workflow load took 17 s here). */
export const UI_TIMEOUT = 90_000;

export const ndv = (page: Page): Locator => page.locator('[data-test-id="ndv"]');
export const nodeParameters = (page: Page): Locator => page.locator('[data-test-id="node-parameters"]');
export const parameterInput = (page: Page, name: string): Locator =>
	nodeParameters(page).locator(`[data-test-id="parameter-input-${name}"]`);

/** Signs in through the sign-in form, as a user would. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
	await timed('signin', 'sign in (browser)', () => signInOnce(page, baseUrl, email, password));
}

async function signInOnce(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
	await page.goto(`${baseUrl}/signin`, { timeout: UI_TIMEOUT });
	const emailInput = page.locator('input[name="emailOrLdapLoginId"]');
	await emailInput.waitFor({ timeout: UI_TIMEOUT });
	await emailInput.fill(email);
	await page.locator('input[name="password"]').fill(password);
	await page.getByRole('button', { name: /sign in/i }).click();
	await page.waitForURL((url) => !url.pathname.startsWith('/signin'), { timeout: UI_TIMEOUT });
}

/** Opens a saved workflow and waits for its nodes on the canvas. */
export async function openWorkflow(page: Page, baseUrl: string, workflowId: string): Promise<void> {
	await page.goto(`${baseUrl}/workflow/${workflowId}`, { timeout: UI_TIMEOUT });
	await page.locator('[data-test-id="canvas-node"]').first().waitFor({ timeout: UI_TIMEOUT });
	// n8n 2.x locks a workflow to the tab that last edited it, for a while after that tab is gone ("Editing in another
	// tab"); taking the lock over is what a user does. Its pill arrives over the push connection, shortly after load.
	const editHere = page.getByRole('button', { name: 'Edit here' });
	if (await editHere.waitFor({ timeout: 5_000 }).then(() => true, () => false)) {
		await editHere.click();
		await editHere.waitFor({ state: 'hidden', timeout: UI_TIMEOUT });
	}
}

/** Double-clicks a node on the canvas and waits for its parameter panel. */
export async function openNode(page: Page, nodeName: string): Promise<void> {
	await page.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`).dblclick({ timeout: UI_TIMEOUT });
	await nodeParameters(page).waitFor({ timeout: UI_TIMEOUT });
}

/** The open list of an options parameter (n8n teleports it to <body>; the input's aria-controls names it). */
async function openList(page: Page, name: string): Promise<{ input: Locator; items: Locator }> {
	const input = parameterInput(page, name).locator('input[role="combobox"]');
	if ((await input.getAttribute('aria-expanded')) !== 'true') await input.click();
	const listId = await input.getAttribute('aria-controls');
	if (!listId) throw new Error(`the ${name} dropdown names no list (aria-controls)`);
	const items = page.locator(`[id="${listId}"] [role="option"]`);
	await items.first().waitFor({ timeout: UI_TIMEOUT });
	return { input, items };
}

async function closeList(input: Locator): Promise<void> {
	if ((await input.getAttribute('aria-expanded')) === 'true') await input.click();
	await input.page().waitForFunction(
		(element) => (element as { getAttribute(name: string): string | null }).getAttribute('aria-expanded') !== 'true',
		await input.elementHandle(),
		{ timeout: UI_TIMEOUT },
	);
}

export interface ListOption {
	/** The option's name as shown (its headline). */
	name: string;
	/** The grey line under the name, when the option has a description. */
	description?: string;
	selected: boolean;
}

/** Opens an options parameter's dropdown, reads every item (name, description, selected), and closes it again. */
export async function readOptions(page: Page, name: string): Promise<ListOption[]> {
	const { input, items } = await openList(page, name);
	const options: ListOption[] = [];
	for (const item of await items.all()) {
		const headline = item.locator('.option-headline');
		const description = item.locator('.option-description');
		options.push({
			name: ((await headline.count()) ? await headline.innerText() : await item.innerText()).trim(),
			description: (await description.count()) ? (await description.innerText()).trim() : undefined,
			selected: (await item.getAttribute('aria-selected')) === 'true',
		});
	}
	await closeList(input);
	return options;
}

/** Picks an option of an options parameter by clicking it in the open dropdown; waits until the input shows it. */
export async function pickOption(page: Page, name: string, optionName: string): Promise<void> {
	const { input, items } = await openList(page, name);
	const exact = new RegExp(`^\\s*${optionName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
	const item = items.filter({ has: page.locator('.option-headline', { hasText: exact }) });
	if ((await item.count()) !== 1) {
		throw new Error(`the ${name} dropdown has ${await item.count()} options named "${optionName}"`);
	}
	await item.click({ timeout: UI_TIMEOUT });
	await page.waitForFunction(
		([element, wanted]) => (element as { value: string }).value === wanted,
		[await input.elementHandle(), optionName] as const,
		{ timeout: UI_TIMEOUT },
	);
}

/** The value an options parameter's closed input shows. */
export async function shownOption(page: Page, name: string): Promise<string> {
	return await parameterInput(page, name).locator('input[role="combobox"]').inputValue();
}

export interface ParameterLabel {
	/** The parameter's name (the label's `for`). */
	name: string;
	/** Its display name as shown. */
	label: string;
}

/** The labels of the parameters the panel shows (visible ones only, in order; not the Settings tab's). */
export async function visibleLabels(page: Page): Promise<ParameterLabel[]> {
	const labels = nodeParameters(page).locator('label.n8n-input-label').filter({ visible: true });
	const out: ParameterLabel[] = [];
	for (const label of await labels.all()) {
		// The first text span is the title; the trailing Fixed/Expression toggle is text too, so it is not innerText.
		const title = label.locator('.n8n-text').first();
		out.push({ name: (await label.getAttribute('for')) ?? '', label: (await title.innerText()).trim() });
	}
	return out;
}

/** Whether a boolean parameter's switch is on, or undefined when the panel shows no such switch. */
export async function switchState(page: Page, name: string): Promise<boolean | undefined> {
	const input = parameterInput(page, name).locator('input[role="switch"]');
	if (!(await input.count())) return undefined;
	return (await input.getAttribute('aria-checked')) === 'true';
}

export interface NumberInputState {
	value: string;
	/** The bounds the input carries. */
	min: number;
	max: number;
}

/** A number parameter's input: n8n 1.x renders `type="number"`, 2.x a text input; both have the spinbutton role. */
const numberField = (page: Page, name: string): Locator => parameterInput(page, name).locator('input[role="spinbutton"]');

/**
 * A number parameter's shown value and bounds. n8n 1.x's input carries min/max attributes (its aria-valuemin/max keep
 * the bounds the panel opened with when another parameter variant is shown, so they are not read there); 2.x's carries
 * only aria-valuemin/max.
 */
export async function numberInput(page: Page, name: string): Promise<NumberInputState> {
	const input = numberField(page, name);
	const bound = async (attr: 'min' | 'max') =>
		Number((await input.getAttribute(attr)) ?? (await input.getAttribute(`aria-value${attr}`)));
	return { value: await input.inputValue(), min: await bound('min'), max: await bound('max') };
}

/** Types a value into a number parameter as a user would, leaves the field, and returns what the input kept. */
export async function typeNumber(page: Page, name: string, typed: string): Promise<string> {
	const input = numberField(page, name);
	await input.click();
	await input.fill(typed);
	await input.press('Tab');
	// The input settles (clamped, rounded) when it loses focus; let the editor render that before reading.
	await page.waitForFunction((element) => (globalThis as { document?: { activeElement: unknown } }).document?.activeElement !== element, await input.elementHandle(), {
		timeout: UI_TIMEOUT,
	});
	await renderedFrames(page);
	return await input.inputValue();
}

/** Resolves after the page rendered two more frames (Vue has applied what the last event changed). */
export async function renderedFrames(page: Page): Promise<void> {
	await page.evaluate(
		() =>
			new Promise<void>((resolve) => {
				const window = globalThis as unknown as { requestAnimationFrame(callback: () => void): void };
				window.requestAnimationFrame(() => window.requestAnimationFrame(() => resolve()));
			}),
	);
}

/** The issues n8n flags on a parameter (the warning triangle's tooltip), or [] when it flags none. */
export async function parameterIssues(page: Page, name: string): Promise<string[]> {
	const icon = parameterInput(page, name).locator('xpath=..').locator('[data-test-id="parameter-issues"]');
	if (!(await icon.count())) return [];
	await icon.hover();
	// n8n 1.x shows it in an Element Plus popper, 2.x in a reka-ui one.
	const tooltip = page
		.locator('.el-popper, [data-reka-popper-content-wrapper], [role="tooltip"]')
		.filter({ visible: true })
		.filter({ hasText: 'Issues:' });
	await tooltip.first().waitFor({ timeout: UI_TIMEOUT });
	const lines = (await tooltip.first().innerText()).split('\n').map((line) => line.trim());
	await page.mouse.move(0, 0);
	return lines.filter((line) => line && line !== 'Issues:');
}
