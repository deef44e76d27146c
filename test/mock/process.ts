/** Runs the mock as a separate child process (tests talk to a real server over loopback) and returns its client. */
import { spawn, type ChildProcess } from 'child_process';
import { once } from 'events';
import * as path from 'path';
import { createInterface } from 'readline';
import type { KeyPermissions } from './auth';
import { createMockClient, type MockClient } from './client';
import { compiledCli, NODE_MODULES } from './compile';
import type { MockLimits } from './limits';
import type { Personality, TaskScript } from './types';

export type { MockClient } from './client';

export interface MockProcessOptions {
	/** Default 0 (random). */
	port?: number;
	apiKey?: string;
	secondaryKeys?: Record<string, KeyPermissions>;
	defaults?: Partial<TaskScript>;
	/**
	 * Passed as MOCK_RATE_LIMIT / MOCK_TASK_SECONDS / MOCK_READ_FAULT_RATE / MOCK_FETCH_MEDIA (override the parent's
	 * environment).
	 */
	limits?: Partial<MockLimits>;
	/**
	 * 'new-api': the child answers as new-api does (MOCK_PERSONALITY). Default: 'default', or 'new-api' when the test
	 * run sets GEN_GATEWAY_MOCK_PERSONALITY=new-api (to run existing tests against new-api's wire); the parent's own
	 * MOCK_PERSONALITY is never inherited.
	 */
	personality?: Personality;
	/** Give up waiting for the start-up line after this long (default 20 s). */
	startTimeoutMs?: number;
}

function defaultPersonality(): Personality {
	return process.env.GEN_GATEWAY_MOCK_PERSONALITY === 'new-api' ? 'new-api' : 'default';
}

/** Plain JS when the mock can be precompiled; ts-node (transpile-only) otherwise. */
function childCommand(): { args: string[]; nodePath?: string } {
	try {
		return { args: [compiledCli()], nodePath: NODE_MODULES };
	} catch {
		return { args: ['-r', 'ts-node/register/transpile-only', path.join(__dirname, 'cli.ts')] };
	}
}
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killAllOnExit(): void {
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	process.on('exit', () => {
		for (const child of live) child.kill('SIGKILL');
	});
}

async function stopChild(child: ChildProcess): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) return;
	const exited = once(child, 'exit');
	child.kill('SIGTERM');
	const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
	await exited;
	clearTimeout(timer);
	live.delete(child);
}

export async function spawnMockProcess(opts: MockProcessOptions = {}): Promise<MockClient> {
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PORT: String(opts.port ?? 0),
		MOCK_EXIT_WITH_STDIN: '1',
		MOCK_PERSONALITY: opts.personality ?? defaultPersonality(),
		...(opts.apiKey ? { MOCK_API_KEY: opts.apiKey } : {}),
		...(opts.secondaryKeys ? { MOCK_SECONDARY_KEYS: JSON.stringify(opts.secondaryKeys) } : {}),
		...(opts.defaults ? { MOCK_DEFAULTS: JSON.stringify(opts.defaults) } : {}),
		...(opts.limits?.rateLimit !== undefined ? { MOCK_RATE_LIMIT: String(opts.limits.rateLimit) } : {}),
		...(opts.limits?.limiter !== undefined ? { MOCK_LIMITER: opts.limits.limiter } : {}),
		...(opts.limits?.taskSeconds ? { MOCK_TASK_SECONDS: opts.limits.taskSeconds.join('-') } : {}),
		...(opts.limits?.readFaultRate !== undefined ? { MOCK_READ_FAULT_RATE: String(opts.limits.readFaultRate) } : {}),
		...(opts.limits?.fetchMedia !== undefined ? { MOCK_FETCH_MEDIA: opts.limits.fetchMedia } : {}),
	};
	const command = childCommand();
	if (command.nodePath) env.NODE_PATH = [command.nodePath, process.env.NODE_PATH].filter(Boolean).join(path.delimiter);
	const child = spawn(process.execPath, command.args, {
		env,
		cwd: path.join(__dirname, '..', '..'),
		stdio: ['pipe', 'pipe', 'pipe'],
	});
	live.add(child);
	killAllOnExit();
	child.on('exit', () => live.delete(child));

	let stderr = '';
	child.stderr?.on('data', (d: Buffer) => {
		stderr = (stderr + d.toString()).slice(-4000);
	});
	const lines = createInterface({ input: child.stdout! });
	try {
		const first = await new Promise<string>((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error('timed out')), opts.startTimeoutMs ?? 20_000);
			lines.once('line', (line) => {
				clearTimeout(timer);
				resolve(line);
			});
			child.once('exit', (code) => {
				clearTimeout(timer);
				reject(new Error(`exited with code ${code}`));
			});
		});
		const { url, apiKey } = JSON.parse(first) as { url: string; apiKey: string };
		// Keep draining stdout so the child never blocks on a full pipe.
		lines.on('line', () => undefined);
		return createMockClient(url, apiKey, () => stopChild(child));
	} catch (err) {
		await stopChild(child);
		throw new Error(`mock process did not start: ${(err as Error).message}\n${stderr}`);
	}
}
