// A jest reporter that prints, at the end of every jest run, what each test file cost: its wall time, its tests,
// and the phases the e2e toolkit recorded for it (test/timing/phases.ts: n8n install, home set-up, n8n CLI calls,
// n8n start, sign-in, browser, workflow runs, idle waits). It also writes the same numbers as JSON
// (`timings.json` in the results folder) for scripts/testing-doc.mjs, which puts them into docs/testing.md.
//
// Results folder: GEN_GATEWAY_RESULTS_DIR (CI sets .ci-results), else test/e2e/.work/timing.
// Per-test rule (issue 20): a single test or a whole file longer than 60 s must say why in its file's header comment,
// on a line starting with `// Time:`; the reporter names those that do not.
'use strict';
const fs = require('fs');
const path = require('path');

const REPO_ROOT = path.resolve(__dirname, '../..');
// cpu: what the file cost the machine (test/timing/environment.js), not a phase of its wall time.
const KINDS = ['cpu', 'install', 'home', 'cli', 'start', 'rest', 'signin', 'browser', 'run', 'wait'];
const LONG_MS = 60_000;

const seconds = (ms) => (ms / 1000).toFixed(ms >= 100_000 ? 0 : 1);

function pad(text, width, right = false) {
	text = String(text);
	return right ? text.padStart(width) : text.padEnd(width);
}

/** Leading comment lines of a file (its header). */
function header(file) {
	try {
		const lines = fs.readFileSync(file, 'utf8').split('\n');
		const out = [];
		for (const line of lines) {
			if (!line.startsWith('//')) break;
			out.push(line);
		}
		return out.join('\n');
	} catch {
		return '';
	}
}

class TimingReporter {
	constructor(globalConfig, options = {}) {
		this.globalConfig = globalConfig;
		this.label = options.label ?? process.env.GEN_GATEWAY_TIMING_LABEL ?? 'jest';
		this.resultsDir = path.resolve(
			REPO_ROOT,
			process.env.GEN_GATEWAY_RESULTS_DIR ?? path.join('test', 'e2e', '.work', 'timing'),
		);
		fs.mkdirSync(this.resultsDir, { recursive: true });
		// Set before jest starts its workers, which inherit this environment (and so do the test files they run).
		this.run = `${new Date().toISOString()}#${process.pid}`;
		process.env.GEN_GATEWAY_TIMING_RUN = this.run;
		process.env.GEN_GATEWAY_TIMING_FILE ??= path.join(this.resultsDir, 'phases.jsonl');
		this.phaseFile = process.env.GEN_GATEWAY_TIMING_FILE;
	}

	onRunStart() {
		this.startedAt = Date.now();
	}

	phases() {
		let text = '';
		try {
			text = fs.readFileSync(this.phaseFile, 'utf8');
		} catch {
			return [];
		}
		const out = [];
		for (const line of text.split('\n')) {
			if (!line) continue;
			try {
				const record = JSON.parse(line);
				if (record.run === this.run) out.push(record);
			} catch {
				// a torn line from a killed process
			}
		}
		return out;
	}

	summarise(results) {
		const byFile = new Map();
		for (const result of results.testResults) {
			const file = path.relative(REPO_ROOT, result.testFilePath);
			const tests = result.testResults;
			const longest = tests.reduce((max, t) => ((t.duration ?? 0) > (max?.duration ?? -1) ? t : max), undefined);
			byFile.set(file, {
				file,
				ms: Math.max(0, (result.perfStats.end ?? 0) - (result.perfStats.start ?? 0)),
				tests: tests.length,
				passed: tests.filter((t) => t.status === 'passed').length,
				failed: tests.filter((t) => t.status === 'failed').length + (result.testExecError ? 1 : 0),
				skipped: tests.filter((t) => t.status === 'pending' || t.status === 'skipped' || t.status === 'todo').length,
				longestTest: longest ? { name: longest.fullName, ms: longest.duration ?? 0 } : undefined,
				phases: Object.fromEntries(KINDS.map((kind) => [kind, { ms: 0, count: 0 }])),
				details: {},
			});
		}
		for (const phase of this.phases()) {
			const entry = byFile.get(phase.file);
			if (!entry) continue;
			const kind = entry.phases[phase.kind];
			if (kind) {
				kind.ms += phase.ms;
				kind.count += 1;
			}
			const detail = (entry.details[phase.what] ??= { ms: 0, count: 0 });
			detail.ms += phase.ms;
			detail.count += 1;
		}
		return [...byFile.values()].sort((a, b) => b.ms - a.ms);
	}

	onRunComplete(_contexts, results) {
		const files = this.summarise(results);
		const wallMs = Date.now() - (this.startedAt ?? results.startTime);
		const summary = {
			label: this.label,
			run: this.run,
			finishedAt: new Date().toISOString(),
			wallMs,
			workers: this.globalConfig.maxWorkers,
			runInBand: this.globalConfig.runInBand ?? undefined,
			tests: { passed: results.numPassedTests, failed: results.numFailedTests, total: results.numTotalTests },
			files,
		};
		try {
			fs.writeFileSync(path.join(this.resultsDir, `timings-${this.label}.json`), JSON.stringify(summary, null, 2));
		} catch {
			// no results folder: the table below still shows
		}
		this.print(summary);
	}

	print(summary) {
		const { files } = summary;
		if (files.length === 0) return;
		const width = Math.min(60, Math.max(...files.map((f) => f.file.length)));
		const kindsUsed = KINDS.filter((kind) => files.some((f) => f.phases[kind].count > 0));
		const lines = [];
		lines.push('');
		lines.push(
			`Time per test file (${summary.label}; s; ran: tests run, !failed; phases recorded by the e2e toolkit as s/count, summed, may overlap):`,
		);
		lines.push(
			[pad('file', width), pad('wall', 7, true), pad('ran', 6, true), ...kindsUsed.map((k) => pad(k, 8, true))].join(' '),
		);
		let sum = 0;
		for (const f of files) {
			sum += f.ms;
			const shown = f.file.length > width ? '…' + f.file.slice(-(width - 1)) : f.file;
			lines.push(
				[
					pad(shown, width),
					pad(seconds(f.ms), 7, true),
					pad(`${f.tests - f.skipped}${f.failed ? `!${f.failed}` : ''}`, 6, true),
					...kindsUsed.map((k) => pad(f.phases[k].count ? `${seconds(f.phases[k].ms)}/${f.phases[k].count}` : '', 8, true)),
				].join(' '),
			);
		}
		lines.push(`${files.length} files, ${seconds(sum)} s summed over files, ${seconds(summary.wallMs)} s wall (${summary.label})`);
		const unexplained = files.filter((f) => {
			const long = f.ms > LONG_MS || (f.longestTest?.ms ?? 0) > LONG_MS;
			return long && !/^\/\/ Time:/m.test(header(path.join(REPO_ROOT, f.file)));
		});
		if (unexplained.length > 0) {
			lines.push(`Longer than 60 s without a '// Time:' line in the header saying why: ${unexplained.map((f) => f.file).join(', ')}`);
		}
		process.stderr.write(lines.join('\n') + '\n');
	}
}

module.exports = TimingReporter;
