import { Logger } from '@n8n/backend-common';
import { InstanceSettingsConfig } from '@n8n/config';
import { Container } from '@n8n/di';
import { BinaryDataConfig, BinaryDataService, ErrorReporter } from 'n8n-core';
import { SSHClientsManager } from 'n8n-core/dist/execution-engine/ssh-clients-manager';
import { LoggerProxy } from 'n8n-workflow';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { CollectingLogger } from './logger';

/**
 * n8n-core resolves its services from the @n8n/di Container. The harness must register into the very
 * Container (and config classes) n8n-core uses, so check that our imports resolve to n8n-core's copies.
 */
function assertSameModulesAsCore() {
	const coreDir = path.dirname(require.resolve('n8n-core/package.json'));
	for (const id of ['@n8n/di', '@n8n/config', '@n8n/backend-common', 'n8n-workflow']) {
		if (require.resolve(id, { paths: [coreDir] }) !== require.resolve(id)) {
			throw new Error(`test harness: ${id} resolves to a different copy than n8n-core's; dedupe node_modules`);
		}
	}
}

/** A private n8n user folder (settings file, default binary folder) for this module registry. */
const userFolder = mkdtempSync(path.join(tmpdir(), 'gen-gateway-harness-'));
/** Every folder the harness made; whatever a test did not clean up goes when its file ends. */
const madeFolders = new Set<string>([userFolder]);
const removeMadeFolders = () => {
	for (const folder of madeFolders) rmSync(folder, { recursive: true, force: true });
	madeFolders.clear();
};
// Inside jest this module loads at a test file's top level, where afterAll may be registered.
if (typeof afterAll === 'function') afterAll(removeMadeFolders);
else process.once('exit', removeMadeFolders);

let logger: CollectingLogger | undefined;

/**
 * What n8n's start-up does that node execution relies on: instance settings (encryption key for the
 * Credentials cipher), the Logger, LoggerProxy. Done once; returns the collecting logger.
 */
export function setupCoreServices(): CollectingLogger {
	if (logger) return logger;
	assertSameModulesAsCore();

	// InstanceSettings reads (or creates) <n8nFolder>/config; write it first, owner-only, so n8n does not warn.
	const n8nFolder = path.join(userFolder, '.n8n');
	const encryptionKey = randomBytes(24).toString('base64');
	mkdirSync(n8nFolder, { recursive: true });
	writeFileSync(path.join(n8nFolder, 'config'), JSON.stringify({ encryptionKey }), { mode: 0o600 });
	const instanceConfig = Object.assign(new InstanceSettingsConfig(), {
		n8nFolder,
		userHome: userFolder,
		encryptionKey,
		enforceSettingsFilePermissions: false,
	});
	Container.set(InstanceSettingsConfig, instanceConfig);

	logger = new CollectingLogger();
	Container.set(Logger, logger as unknown as Logger);
	LoggerProxy.init(logger);
	return logger;
}

export type BinaryMode = 'default' | 'filesystem';

/**
 * A fresh, initialised BinaryDataService registered in the Container for one run, as n8n does at
 * start-up (`Container.get(BinaryDataService).init()` with N8N_DEFAULT_BINARY_DATA_MODE).
 * 'filesystem' stores under a new temp folder, returned so the caller can remove it.
 */
export async function setupBinaryData(mode: BinaryMode): Promise<{ service: BinaryDataService; folder?: string }> {
	const folder = mode === 'filesystem' ? await mkdtemp(path.join(tmpdir(), 'gen-gateway-binary-')) : undefined;
	if (folder) madeFolders.add(folder);
	// BinaryDataConfig's constructor reads InstanceSettings and the environment; build it from its prototype instead.
	const config = Object.assign(Object.create(BinaryDataConfig.prototype) as BinaryDataConfig, {
		mode,
		availableModes: ['filesystem'],
		localStoragePath: folder ?? path.join(userFolder, '.n8n', 'binaryData'),
		signingSecret: randomBytes(16).toString('hex'),
		dbMaxFileSize: 512,
	});
	const service = new BinaryDataService(config, Container.get(ErrorReporter), Container.get(Logger));
	await service.init();
	Container.set(BinaryDataService, service);
	return { service, folder };
}

/**
 * Every execute context asks the Container for the SSH tunnel manager, whose constructor starts a
 * 60 s cleanup interval that n8n stops at shutdown; stop it after each run so jest can exit.
 */
export function shutDownRunServices() {
	Container.get(SSHClientsManager).onShutdown();
}
