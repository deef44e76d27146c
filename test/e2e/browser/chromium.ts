// Debian's Chromium driven by playwright-core: a fresh profile per launch, flags that keep it off the network
// (only loopback is reachable here) and quiet on two busy cores.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

import { timed, timedSync } from '../../timing/phases';
import { APT_LOCK } from '../support/paths';

export const CHROMIUM_PATH = process.env.GEN_GATEWAY_E2E_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

export interface BrowserSession {
	context: BrowserContext;
	page: Page;
	/** The profile folder (removed by close()). */
	userDataDir: string;
	close(): Promise<void>;
}

/** Why the browser test cannot run here, or undefined when Chromium is installed. */
export function chromiumProblem(): string | undefined {
	if (fs.existsSync(CHROMIUM_PATH)) return undefined;
	return `no Chromium at ${CHROMIUM_PATH}: apt-get install -y --no-install-recommends chromium fonts-liberation`;
}

/**
 * Installs Debian's Chromium the first time (scripts/install-chromium.sh; idempotent, about 20 s), as `npm test`
 * does for everything else it needs, so a fresh machine needs no step the README does not name.
 */
export function ensureChromium(): void {
	if (!chromiumProblem()) return;
	const script = path.resolve(__dirname, '../../../scripts/install-chromium.sh');
	// One apt at a time: parallel jest workers may ask for Chromium, Redis and PostgreSQL at once.
	timedSync('install', 'chromium install', () =>
		execFileSync('flock', [APT_LOCK, 'bash', script], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 10 * 60_000 }),
	);
}

/** Launches Chromium with a fresh --user-data-dir and one page of the given viewport (CSS pixels) and pixel density. */
export async function launchChromium(
	viewport = { width: 1280, height: 1800 },
	deviceScaleFactor = 1,
): Promise<BrowserSession> {
	ensureChromium();
	const problem = chromiumProblem();
	if (problem) throw new Error(problem);
	const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-chromium-'));
	// launchPersistentContext is playwright's way to give Chromium a --user-data-dir of our choosing.
	const context = await timed('browser', 'chromium launch', () =>
		chromium.launchPersistentContext(userDataDir, {
			executablePath: CHROMIUM_PATH,
			headless: true,
			args: CHROMIUM_ARGS,
			viewport,
			deviceScaleFactor,
			timeout: 120_000,
		}),
	);
	// Leaving a workflow with unsaved changes asks before unloading: the tests always leave.
	const acceptDialogs = (page: Page) => page.on('dialog', (dialog) => void dialog.accept().catch(() => undefined));
	context.pages().forEach(acceptDialogs);
	context.on('page', acceptDialogs);
	const page = context.pages()[0] ?? (await context.newPage());
	return {
		context,
		page,
		userDataDir,
		close: async () => {
			await context.close().catch(() => undefined);
			fs.rmSync(userDataDir, { recursive: true, force: true });
		},
	};
}
