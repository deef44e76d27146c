import { spawn, type ChildProcess } from 'child_process';
import * as net from 'net';

export interface ProcessResult {
	exitCode: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	durationMs: number;
}

export interface RunOptions {
	cwd?: string;
	env: NodeJS.ProcessEnv;
	timeoutMs: number;
	/** Receives every chunk of stdout and stderr, e.g. to keep a log of everything a home's processes printed. */
	onOutput?: (chunk: string) => void;
}

/** Runs a command to completion (no stdin); kills its whole process group when it overruns. */
export async function runProcess(command: string, args: string[], options: RunOptions): Promise<ProcessResult> {
	const started = Date.now();
	const child = spawnGroup(command, args, options);
	let stdout = '';
	let stderr = '';
	child.stdout!.on('data', (chunk: Buffer) => {
		stdout += chunk.toString();
		options.onOutput?.(chunk.toString());
	});
	child.stderr!.on('data', (chunk: Buffer) => {
		stderr += chunk.toString();
		options.onOutput?.(chunk.toString());
	});
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup(child, 'SIGKILL');
	}, options.timeoutMs);
	const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
		child.on('error', reject);
		child.on('close', (code, sig) => resolve([code, sig]));
	}).finally(() => clearTimeout(timer));
	if (timedOut) {
		throw new Error(
			`${command} ${args.join(' ')} did not finish within ${options.timeoutMs} ms\n--- stdout ---\n${tail(stdout)}\n--- stderr ---\n${tail(stderr)}`,
		);
	}
	return { exitCode, signal, stdout, stderr, durationMs: Date.now() - started };
}

const liveGroups = new Set<ChildProcess>();

/**
 * Spawns in its own process group (detached), so n8n and its task runner can be stopped together. Groups still
 * running when this process exits are killed: an orphaned n8n whose output pipe closed was seen spinning at 70% CPU
 * and 2.6 GB, deaf to SIGTERM.
 */
export function spawnGroup(command: string, args: string[], options: Omit<RunOptions, 'timeoutMs'>): ChildProcess {
	const child = spawn(command, args, {
		cwd: options.cwd,
		env: options.env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	if (liveGroups.size === 0) watchExit(true);
	liveGroups.add(child);
	child.once('close', () => {
		liveGroups.delete(child);
		if (liveGroups.size === 0) watchExit(false);
	});
	return child;
}

function killLiveGroups(): void {
	for (const child of liveGroups) killGroup(child, 'SIGKILL');
}

/**
 * Ctrl-C does not reach detached groups: kill them, then let the signal do what it would have done. A program
 * with its own handler (npm start) stops its servers itself; the exit hook catches what is left.
 */
function onSignal(signal: NodeJS.Signals): void {
	if (process.listeners(signal).some((listener) => listener !== onSignal)) return;
	killLiveGroups();
	watchExit(false);
	if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function watchExit(on: boolean): void {
	const method = on ? 'on' : 'off';
	process[method]('exit', killLiveGroups);
	process[method]('SIGINT', onSignal);
	process[method]('SIGTERM', onSignal);
}

/** Signals the process group a child leads (it was spawned detached); ignores groups that are already gone. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		// already exited
	}
}

/** A TCP port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
	return await new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			if (address === null || typeof address === 'string') return reject(new Error('no port'));
			server.close(() => resolve(address.port));
		});
	});
}

/** The last lines of a long output, without colour codes, for error messages. */
export function tail(text: string, lines = 40): string {
	// eslint-disable-next-line no-control-regex
	return text.replace(/\x1b\[[0-9;]*m/g, '').split('\n').slice(-lines).join('\n');
}
