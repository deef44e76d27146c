// n8n 2.x's Settings → Community nodes page as a user drives it: install a package by its npm name (the risk notice
// accepted), read the installed packages' cards, update from a card, uninstall from a card's menu. Selectors are the
// page's visible texts and n8n's own data-test-id attributes (those n8n's Playwright suite uses).
import type { Locator, Page } from 'playwright-core';

import { renderedFrames, UI_TIMEOUT } from './editor';

const byTestId = (page: Page, id: string): Locator => page.locator(`[data-test-id="${id}"]`);
export const installModal = (page: Page): Locator => byTestId(page, 'communityPackageInstall-modal');
const confirmModal = (page: Page): Locator => byTestId(page, 'communityPackageManageConfirm-modal');
const cards = (page: Page): Locator => byTestId(page, 'community-package-card');
/** The card of one package (its title is the npm name). */
export const packageCard = (page: Page, name: string): Locator =>
	cards(page).filter({ has: page.getByText(name, { exact: true }) });

/** An installing or updating package takes npm's time: pack, unpack, install, load (about 2 s here, more when busy). */
const PACKAGE_TIMEOUT = 180_000;

export interface PackageCard {
	name: string;
	/** The version the card shows, without its `v`. */
	version: string;
	/** The node names the card lists. */
	nodes: string[];
	/** Whether the card offers an Update button. */
	updateOffered: boolean;
}

/** Opens Settings → Community nodes and waits until it shows either its empty state or the installed packages. */
export async function openCommunityNodes(page: Page, baseUrl: string): Promise<void> {
	await page.goto(`${baseUrl}/settings/community-nodes`, { timeout: UI_TIMEOUT });
	await byTestId(page, 'empty-state').or(cards(page).first()).waitFor({ timeout: UI_TIMEOUT });
	// While n8n asks npm for updates the page shows skeleton cards; real cards have a title.
	await page.waitForFunction(
		() => {
			const document = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> } }).document;
			const shown = Array.from(document.querySelectorAll('[data-test-id="community-package-card"]'));
			return shown.every((card) => (card.textContent ?? '').trim().length > 0);
		},
		undefined,
		{ timeout: UI_TIMEOUT },
	);
	await renderedFrames(page);
}

/** The installed packages as the page shows them. */
export async function readCards(page: Page): Promise<PackageCard[]> {
	const out: PackageCard[] = [];
	for (const card of await cards(page).all()) {
		const text = (await card.innerText()).trim();
		const lines = text.split('\n').map((line) => line.trim()).filter(Boolean);
		const version = /\bv(\d+\.\d+\.\d+\S*)/.exec(text)?.[1] ?? '';
		const nodesLine = lines.find((line) => /^\d+ nodes?:/.test(line)) ?? '';
		const nodes = nodesLine.replace(/^\d+ nodes?:\s*/, '').split(',').map((node) => node.trim()).filter(Boolean);
		const updateOffered = (await card.getByRole('button', { name: 'Update', exact: true }).count()) > 0;
		out.push({ name: lines[0] ?? '', version, nodes, updateOffered });
	}
	return out;
}

/**
 * Opens the install dialog (the empty state's "Install a community node", or the page's "Install" once a package is
 * installed), types the npm name and ticks the risk notice. Returns the dialog, filled in, for a picture.
 */
export async function fillInstallDialog(page: Page, packageName: string): Promise<Locator> {
	const first = page.getByRole('button', { name: 'Install a community node' });
	const more = page.getByRole('button', { name: 'Install', exact: true });
	await first.or(more).first().click({ timeout: UI_TIMEOUT });
	const modal = installModal(page);
	await modal.waitFor({ timeout: UI_TIMEOUT });
	await modal.getByPlaceholder(/.+/).or(modal.locator('input[type="text"]')).first().fill(packageName);
	const install = byTestId(page, 'install-community-package-button');
	// The Install button stays disabled until the risk notice is accepted.
	if (await install.isEnabled()) throw new Error('the Install button was enabled before the risk notice was accepted');
	await byTestId(page, 'user-agreement-checkbox').click();
	await page.waitForFunction((button) => !(button as { disabled: boolean }).disabled, await install.elementHandle(), { timeout: UI_TIMEOUT });
	// The pointer off every control (no hover colour in a picture).
	await page.mouse.move(640, 880);
	await renderedFrames(page);
	return modal;
}

/** Clicks Install in the filled-in dialog and waits until the dialog closes and the package's card is shown. */
export async function confirmInstall(page: Page, packageName: string): Promise<PackageCard> {
	await byTestId(page, 'install-community-package-button').click({ timeout: UI_TIMEOUT });
	await installModal(page).waitFor({ state: 'hidden', timeout: PACKAGE_TIMEOUT });
	await packageCard(page, packageName).waitFor({ timeout: UI_TIMEOUT });
	return await cardOf(page, packageName);
}

/** What the confirmation dialog of an update or uninstall says (its body text), before confirming it. */
export interface Confirmation {
	title: string;
	text: string;
}

/**
 * The dialog loads the list of workflows that use the package's nodes after it opens (it says "not used in any
 * workflows" until then): its text is read until `settled` holds for it, or for at most 20 s.
 */
export type ConfirmationSettled = (text: string) => boolean;

/** Clicks the card's Update, reads the confirmation, confirms it; resolves when the card shows the new version. */
export async function updateFromCard(page: Page, packageName: string, newVersion: string, settled?: ConfirmationSettled): Promise<Confirmation> {
	await packageCard(page, packageName).getByRole('button', { name: 'Update', exact: true }).click({ timeout: UI_TIMEOUT });
	const confirmation = await readConfirmation(page, settled);
	await confirmModal(page).getByRole('button', { name: 'Confirm update' }).click({ timeout: UI_TIMEOUT });
	await confirmModal(page).waitFor({ state: 'hidden', timeout: PACKAGE_TIMEOUT });
	await page.waitForFunction(
		([card, wanted]) => new RegExp(`\\bv${wanted.replace(/\./g, '\\.')}\\b`).test((card as { textContent: string | null }).textContent ?? ''),
		[await packageCard(page, packageName).elementHandle(), newVersion] as const,
		{ timeout: UI_TIMEOUT },
	);
	return confirmation;
}

/** The card's menu → Uninstall, reads the confirmation, confirms it; resolves when the card is gone. */
export async function uninstallFromCard(page: Page, packageName: string, settled?: ConfirmationSettled): Promise<Confirmation> {
	await packageCard(page, packageName).locator('[data-test-id="action-toggle"]').click({ timeout: UI_TIMEOUT });
	await byTestId(page, 'action-uninstall').click({ timeout: UI_TIMEOUT });
	const confirmation = await readConfirmation(page, settled);
	await confirmModal(page).getByRole('button', { name: 'Confirm uninstall' }).click({ timeout: UI_TIMEOUT });
	await confirmModal(page).waitFor({ state: 'hidden', timeout: PACKAGE_TIMEOUT });
	await packageCard(page, packageName).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
	return confirmation;
}

async function readConfirmation(page: Page, settled: ConfirmationSettled = () => true): Promise<Confirmation> {
	const modal = confirmModal(page);
	await modal.waitFor({ timeout: UI_TIMEOUT });
	const deadline = Date.now() + 20_000;
	for (;;) {
		const lines = (await modal.innerText()).split('\n').map((line) => line.trim()).filter(Boolean);
		const confirmation = { title: lines[0] ?? '', text: lines.slice(1).join('\n') };
		if (settled(confirmation.text) || Date.now() > deadline) return confirmation;
		await page.waitForTimeout(250);
	}
}

async function cardOf(page: Page, packageName: string): Promise<PackageCard> {
	const card = (await readCards(page)).find((one) => one.name === packageName);
	if (!card) throw new Error(`no card for ${packageName}`);
	return card;
}
