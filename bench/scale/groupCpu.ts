import * as fs from 'fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** CPU seconds (user + system) used so far by the live processes of one process group, from /proc. */
export function groupCpuSeconds(pgid: number): number {
	let ticks = 0;
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		let stat: string;
		try {
			stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
		} catch {
			continue; // gone meanwhile
		}
		// After the command's closing parenthesis: state ppid pgrp … utime (14th field) stime (15th).
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		if (Number(fields[2]) !== pgid) continue;
		ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
	}
	return ticks / TICKS;
}

/**
 * The CPU the n8n workers used, as the machine sees it: every 2 s, each worker's process group (n8n worker and its
 * task runner) is read, and a group counts with the most it was seen to use (a SIGKILLed worker's last reading),
 * less what it had used when sampling began (a worker started later, after a kill, counts its start-up).
 * `groups` answers the groups to read now (a restarted worker is a new group).
 */
export function sampleWorkerCpu(groups: () => number[]): { stop(): number } {
	const first = new Map<number, number>();
	const most = new Map<number, number>();
	const read = () => {
		for (const pgid of groups()) most.set(pgid, Math.max(most.get(pgid) ?? 0, groupCpuSeconds(pgid)));
	};
	read();
	for (const [pgid, seconds] of most) first.set(pgid, seconds);
	const timer = setInterval(read, 2000);
	return {
		stop() {
			clearInterval(timer);
			read();
			return [...most].reduce((sum, [pgid, seconds]) => sum + seconds - (first.get(pgid) ?? 0), 0);
		},
	};
}
