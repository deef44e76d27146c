// Long-running helper processes of the queue-mode test (Redis, PostgreSQL, the n8n worker): each in its own process
// group, its output kept, stopped by signal with a SIGKILL fallback, and killed when the test process exits.
import { spawn, type ChildProcess } from 'child_process';

export interface ServiceProcess {
	readonly child: ChildProcess;
	/** Everything it printed so far (stdout and stderr). */
	output(): string;
	/** Resolves with the first output line matching `pattern`; rejects if the process exits first or time runs out. */
	waitForOutput(pattern: RegExp, timeoutMs: number): Promise<string>;
	/** Whether it has exited. */
	exited(): boolean;
	/** Sends `signal` to its group, SIGKILL after `graceMs`; resolves once it has exited. */
	stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

export interface ServiceOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	/** Run as this user (PostgreSQL refuses to run as root). */
	uid?: number;
	gid?: number;
	/** Also receives every chunk it prints (e.g. an n8n home's log). */
	onOutput?: (chunk: string) => void;
}

const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		// already gone
	}
}

let exitHookInstalled = false;
function installExitHook(): void {
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	// A crashed or interrupted test run must not leave servers behind on this machine.
	process.on('exit', () => {
		for (const child of live) killGroup(child, 'SIGKILL');
	});
}

export function startService(command: string, args: string[], options: ServiceOptions = {}): ServiceProcess {
	installExitHook();
	const child = spawn(command, args, {
		cwd: options.cwd,
		env: options.env ?? process.env,
		uid: options.uid,
		gid: options.gid,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	live.add(child);
	let text = '';
	let hasExited = false;
	const listeners = new Set<() => void>();
	const onChunk = (chunk: Buffer) => {
		text += chunk.toString();
		options.onOutput?.(chunk.toString());
		for (const listener of listeners) listener();
	};
	child.stdout!.on('data', onChunk);
	child.stderr!.on('data', onChunk);
	const closed = new Promise<void>((resolve) => {
		const done = () => {
			hasExited = true;
			live.delete(child);
			for (const listener of listeners) listener();
			resolve();
		};
		child.on('close', done);
		child.on('error', (error) => {
			text += `\n[spawn error] ${error.message}\n`;
			done();
		});
	});

	const waitForOutput = (pattern: RegExp, timeoutMs: number) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const line = text.split('\n').find((candidate) => pattern.test(candidate));
				if (line !== undefined) return finish(() => resolve(line));
				if (hasExited) return finish(() => reject(new Error(`${command} exited before printing ${pattern}:\n${tail(text)}`)));
			};
			const timer = setTimeout(
				() => finish(() => reject(new Error(`${command} did not print ${pattern} within ${timeoutMs} ms:\n${tail(text)}`))),
				timeoutMs,
			);
			const finish = (settle: () => void) => {
				clearTimeout(timer);
				listeners.delete(check);
				settle();
			};
			listeners.add(check);
			check();
		});

	const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000) => {
		if (hasExited) return;
		killGroup(child, signal);
		const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
		await closed;
		clearTimeout(timer);
	};

	return { child, output: () => text, waitForOutput, exited: () => hasExited, stop };
}

/** The last lines of a long output, for error messages. */
export function tail(text: string, lines = 40): string {
	return text.split('\n').slice(-lines).join('\n');
}
