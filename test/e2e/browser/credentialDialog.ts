// n8n's credential dialog (1.123): opened from the node panel's pencil, it tests the credential on open; Retry tests
// again, and Save (shown once a field changed) saves and tests. The result is a banner with n8n's own text.
import type { Locator, Page } from 'playwright-core';

import { UI_TIMEOUT } from './editor';

export const SUCCESS_TEXT = 'Connection tested successfully';
/** n8n writes it with a typographic apostrophe. */
export const FAILURE_TEXT = /Couldn[’']t connect with these settings/;

export const credentialDialog = (page: Page): Locator => page.locator('[data-test-id="editCredential-modal"]');

export interface TestBanner {
	outcome: 'success' | 'failure';
	/** The banner's text (for a failure with its "More details", opened). */
	text: string;
}

const successBanner = (dialog: Locator) =>
	dialog.locator('[data-test-id="credentials-config-container-test-success"]').filter({ visible: true });
const failureBanner = (dialog: Locator) =>
	dialog.locator('.el-tag--danger').filter({ hasText: FAILURE_TEXT }).filter({ visible: true });

/** Reads the banner shown now (a failure's "More details" is opened first), or undefined while none shows. */
async function currentBanner(dialog: Locator): Promise<TestBanner | undefined> {
	const success = successBanner(dialog);
	if (await success.count()) return { outcome: 'success', text: (await success.first().innerText()).trim() };
	const failure = failureBanner(dialog);
	if (!(await failure.count())) return undefined;
	const banner = failure.first();
	const more = banner.getByText('More details');
	if (await more.count()) {
		await more.click();
		// n8n's error message opens inside the banner, under its headline.
		await banner.locator('[class*="_details_"]').waitFor({ timeout: UI_TIMEOUT });
	}
	const text = (await banner.innerText()).replace(/\s*\n\s*/g, '\n').trim();
	return { outcome: 'failure', text };
}

/**
 * Runs an action that makes the dialog test the credential (open, Retry, Save), waits for n8n's answer to
 * POST /rest/credentials/test, then for the banner to show `expected` (a banner left from an earlier test would
 * otherwise be read). Returns the banner shown then, which is the other outcome if `expected` never came.
 */
export async function testResult(
	page: Page,
	dialog: Locator,
	action: () => Promise<unknown>,
	expected: TestBanner['outcome'],
): Promise<TestBanner> {
	const answered = page.waitForResponse(
		(response) => response.request().method() === 'POST' && new URL(response.url()).pathname === '/rest/credentials/test',
		{ timeout: UI_TIMEOUT },
	);
	answered.catch(() => undefined); // awaited below; a failed action must not leave it unhandled
	await action();
	await answered;
	const wanted = expected === 'success' ? successBanner(dialog) : failureBanner(dialog);
	await wanted
		.first()
		.waitFor({ timeout: 15_000 })
		.catch(() => undefined);
	await successBanner(dialog).or(failureBanner(dialog)).first().waitFor({ timeout: UI_TIMEOUT });
	const banner = await currentBanner(dialog);
	if (!banner) throw new Error('the credential dialog shows no test result');
	return banner;
}

/** Opens the node's credential from the node panel (the pencil next to "Credential to connect with"). */
export async function openNodeCredential(page: Page, expected: TestBanner['outcome']): Promise<{ dialog: Locator; banner: TestBanner }> {
	const dialog = credentialDialog(page);
	const banner = await testResult(
		page,
		dialog,
		() => page.locator('[data-test-id="credential-edit-button"]').click({ timeout: UI_TIMEOUT }),
		expected,
	);
	return { dialog, banner };
}

/** Clicks Retry (n8n's "test again") on the banner. */
export async function retryTest(page: Page, dialog: Locator, expected: TestBanner['outcome']): Promise<TestBanner> {
	const retry = dialog.getByRole('button', { name: 'Retry' }).filter({ visible: true });
	return await testResult(page, dialog, () => retry.click({ timeout: UI_TIMEOUT }), expected);
}

/** Types a new API key into the dialog and clicks Save; n8n saves, then tests the saved credential. */
export async function saveWithApiKey(
	page: Page,
	dialog: Locator,
	apiKey: string,
	expected: TestBanner['outcome'],
): Promise<TestBanner> {
	try {
		const input = dialog.locator('[data-test-id="parameter-input-apiKey"] input');
		await input.click();
		await input.fill(apiKey);
		const save = dialog.locator('[data-test-id="credential-save-button"]');
		return await testResult(page, dialog, () => save.click({ timeout: UI_TIMEOUT }), expected);
	} catch (error) {
		// Playwright's call logs may quote what was typed: the key never reaches a test report.
		if (error instanceof Error) {
			error.message = error.message.split(apiKey).join('[api key]');
			if (error.stack) error.stack = error.stack.split(apiKey).join('[api key]');
		}
		throw error;
	}
}

/** Closes the dialog with its close button. */
export async function closeDialog(dialog: Locator): Promise<void> {
	await dialog.locator('.el-dialog__headerbtn').click({ timeout: UI_TIMEOUT });
	await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT });
}
