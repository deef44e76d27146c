// What a results file records about where and from what it was measured (both benchmarks write the same fields).
import { execFileSync } from 'child_process';
import * as os from 'os';

import { REPO_ROOT } from '../test/e2e/n8n';

function git(args: string[]): string {
	try {
		return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
	} catch {
		return '';
	}
}

/** The machine, the n8n measured and the load average samples taken during the run. */
export function machineOf(n8nVersion: string, loads: number[]) {
	const cpus = os.cpus();
	return {
		cpus: cpus.length,
		cpuModel: cpus[0]?.model.trim() ?? 'unknown',
		memoryGiB: Math.round(os.totalmem() / 2 ** 30),
		node: process.version,
		n8n: n8nVersion,
		loadAverage: { start: loads[0], end: loads[loads.length - 1], max: Math.max(...loads) },
	};
}

/** The commit measured, and whether the product's files differed from it. */
export function sourceOf() {
	return {
		commit: git(['rev-parse', 'HEAD']),
		dirty: git(['status', '--porcelain', '--', 'nodes', 'credentials']) !== '',
	};
}
