// jest's node environment, plus the CPU each test file cost: the jest worker's own CPU and that of every process it
// started and saw end during the file (n8n, its task runner, Chromium, the mock: a child's CPU is added to its
// parent's when it is reaped), read from /proc when the file starts and after it ends. Written as a `cpu` phase
// (test/timing/phases.ts) that the reporter shows beside the wall time: on two cores the machine, not the waits, is
// what bounds `npm test` (docs/testing.md), so this column says which files to make cheaper.
'use strict';
const fs = require('fs');
const path = require('path');
const { TestEnvironment } = require('jest-environment-node');

const REPO_ROOT = path.resolve(__dirname, '../..');
/** Clock ticks per second of /proc's times (USER_HZ). */
const TICKS = 100;

/** CPU ms of this process and its reaped children (utime, stime, cutime, cstime); undefined off Linux. */
function cpuMs() {
	try {
		const stat = fs.readFileSync('/proc/self/stat', 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / TICKS;
	} catch {
		return undefined;
	}
}

class TimedEnvironment extends TestEnvironment {
	constructor(config, context) {
		super(config, context);
		this.testPath = context.testPath;
	}

	async setup() {
		await super.setup();
		this.startedAt = Date.now();
		this.cpuAtStart = cpuMs();
	}

	async teardown() {
		const end = cpuMs();
		if (end !== undefined && this.cpuAtStart !== undefined) {
			const record = {
				run: process.env.GEN_GATEWAY_TIMING_RUN ?? 'adhoc',
				file: path.relative(REPO_ROOT, this.testPath),
				kind: 'cpu',
				what: 'CPU of the jest worker and the processes it reaped',
				startedAt: this.startedAt,
				ms: end - this.cpuAtStart,
				ok: true,
			};
			const file = process.env.GEN_GATEWAY_TIMING_FILE ?? path.join(REPO_ROOT, 'test', 'e2e', '.work', 'timing', 'phases.jsonl');
			try {
				fs.mkdirSync(path.dirname(file), { recursive: true });
				fs.appendFileSync(file, JSON.stringify(record) + '\n');
			} catch {
				// no timing folder: the tests are what counts
			}
		}
		await super.teardown();
	}
}

module.exports = TimedEnvironment;
