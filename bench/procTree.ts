// Memory of a process tree, read from /proc: the n8n process and its task runner, sampled while a run goes on.
import * as fs from 'fs';

export interface ProcInfo {
	pid: number;
	ppid: number;
	/** Resident set size now, bytes. */
	rss: number;
	/** Peak resident set size of the process so far (VmHWM), bytes. */
	hwm: number;
	/** CPU time used so far (user + system), ms, in steps of one clock tick (10 ms). */
	cpuMs: number;
	cmdline: string;
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux for every architecture n8n runs on). */
const TICK_MS = 10;

/** utime + stime from /proc/<pid>/stat (the fields after the command name, which may contain spaces). */
function cpuMsOf(pid: number): number {
	const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

function readProc(pid: number): ProcInfo | undefined {
	try {
		const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
		const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
		const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
		return {
			pid,
			ppid: field('PPid'),
			rss: field('VmRSS') * 1024,
			hwm: field('VmHWM') * 1024,
			cpuMs: cpuMsOf(pid),
			cmdline,
		};
	} catch {
		return undefined; // gone between the listing and the read
	}
}

/** Direct children of a process (from every thread's `children` file; threads may fork too). */
export function childPids(pid: number): number[] {
	const out: number[] = [];
	try {
		for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
			try {
				const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
				if (text !== '') out.push(...text.split(/\s+/).map(Number));
			} catch {
				// the thread ended meanwhile
			}
		}
	} catch {
		// the process ended meanwhile
	}
	return out;
}

/** `root` and all its descendants that still exist. */
export function descendants(root: number): ProcInfo[] {
	const out: ProcInfo[] = [];
	const stack = [root];
	const seen = new Set<number>();
	while (stack.length > 0) {
		const pid = stack.pop()!;
		if (seen.has(pid)) continue;
		seen.add(pid);
		const info = readProc(pid);
		if (!info) continue;
		out.push(info);
		stack.push(...childPids(pid));
	}
	return out;
}

export interface TreeSample {
	/** Epoch ms. */
	at: number;
	/** Sum of the RSS of every process in the tree, bytes. */
	rss: number;
	/** RSS per pid at this moment. */
	perPid: Record<number, number>;
	/** CPU time used so far per pid, ms. */
	cpuMs: Record<number, number>;
}

export interface TreeTrace {
	samples: TreeSample[];
	/** Last VmHWM seen per pid (each process's own peak; their sum bounds the tree's peak from above). */
	hwm: Record<number, number>;
	/** Command line per pid, to tell n8n from its task runner. */
	commands: Record<number, string>;
	/** The tree's root, once found. */
	rootPid?: number;
}

/**
 * Samples the RSS of a process tree every `intervalMs` until stopped. The root is found by `match` among the
 * direct children of this process (the toolkit spawns n8n itself and does not hand out its pid).
 */
export function sampleTree(match: (info: ProcInfo) => boolean, intervalMs = 50): { stop(): TreeTrace } {
	const trace: TreeTrace = { samples: [], hwm: {}, commands: {} };
	const tick = () => {
		if (trace.rootPid === undefined) {
			const root = childPids(process.pid)
				.map((pid) => readProc(pid))
				.find((info): info is ProcInfo => info !== undefined && match(info));
			if (!root) return;
			trace.rootPid = root.pid;
		}
		const tree = descendants(trace.rootPid);
		if (tree.length === 0) return;
		const perPid: Record<number, number> = {};
		const cpuMs: Record<number, number> = {};
		let rss = 0;
		for (const info of tree) {
			perPid[info.pid] = info.rss;
			cpuMs[info.pid] = info.cpuMs;
			rss += info.rss;
			trace.hwm[info.pid] = Math.max(trace.hwm[info.pid] ?? 0, info.hwm);
			trace.commands[info.pid] ??= info.cmdline.slice(0, 200);
		}
		trace.samples.push({ at: Date.now(), rss, perPid, cpuMs });
	};
	const timer = setInterval(tick, intervalMs);
	tick();
	return {
		stop: () => {
			clearInterval(timer);
			return trace;
		},
	};
}
