#!/usr/bin/env node
// What every jest run of a session cost, from the `timings-<label>.json` files test/timing/reporter.js wrote into a
// results folder (CI: .ci-results). Prints one table per run (largest files first) and the total.
//
//   node test/timing/summary.js [dir]                 print (default dir: GEN_GATEWAY_RESULTS_DIR or test/e2e/.work/timing)
//   node test/timing/summary.js [dir] --write-doc     also rewrite the generated parts of docs/testing.md (one section
//                                                     per run label)
//   node test/timing/summary.js [dir] --write-expected   also rewrite test/timing/expected.json from these runs: the
//                                                     order test/timing/sequencer.js uses and the times the 60 s rule of
//                                                     test/unit/testPlan.test.ts reads (use runs of a quiet machine)
'use strict';
const fs = require('fs');
const path = require('path');

const REPO_ROOT = path.resolve(__dirname, '../..');
const DOC = path.join(REPO_ROOT, 'docs', 'testing.md');
const EXPECTED = path.join(__dirname, 'expected.json');
// cpu: what the file cost the machine (test/timing/environment.js), not a phase of its wall time.
const KINDS = ['cpu', 'install', 'home', 'cli', 'start', 'rest', 'signin', 'browser', 'run', 'wait'];

const args = process.argv.slice(2);
const writeDoc = args.includes('--write-doc');
const writeExpected = args.includes('--write-expected');
const dir = path.resolve(
	REPO_ROOT,
	args.find((arg) => !arg.startsWith('--')) ?? process.env.GEN_GATEWAY_RESULTS_DIR ?? 'test/e2e/.work/timing',
);

const s = (ms) => Math.round(ms / 1000);

function load() {
	if (!fs.existsSync(dir)) return [];
	return fs
		.readdirSync(dir)
		.filter((name) => /^timings-.+\.json$/.test(name))
		.map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')))
		.sort((a, b) => a.finishedAt.localeCompare(b.finishedAt));
}

/** A markdown table of one run's files. */
function table(run, { onlyOver = 0 } = {}) {
	const kinds = KINDS.filter((kind) => run.files.some((f) => f.phases[kind].count > 0));
	const rows = [
		`| File | s | tests run | ${kinds.join(' | ')} |`,
		`|---|--:|--:|${kinds.map(() => '--:').join('|')}|`,
	];
	const shown = run.files.filter((f) => f.ms >= onlyOver);
	for (const f of shown) {
		const phases = kinds.map((k) => (f.phases[k].count ? `${s(f.phases[k].ms)} (${f.phases[k].count})` : ''));
		const ran = f.passed + f.failed;
		rows.push(`| \`${f.file}\` | ${s(f.ms)} | ${ran}${f.failed ? ` (${f.failed} failed)` : ''} | ${phases.join(' | ')} |`);
	}
	const rest = run.files.filter((f) => f.ms < onlyOver);
	if (rest.length > 0) {
		const ms = rest.reduce((sum, f) => sum + f.ms, 0);
		const tests = rest.reduce((sum, f) => sum + f.passed + f.failed, 0);
		rows.push(`| ${rest.length} more files under ${s(onlyOver)} s each | ${s(ms)} | ${tests} |${kinds.map(() => ' ').join('|')}|`);
	}
	const summed = run.files.reduce((sum, f) => sum + f.ms, 0);
	const where = run.workers === 1 ? 'in band' : `${run.workers} workers`;
	rows.push('');
	rows.push(
		`${run.tests.passed} passed, ${run.tests.failed} failed; ${s(summed)} s summed over files, **${s(run.wallMs)} s wall** (${where}), finished ${run.finishedAt}.`,
	);
	return rows.join('\n');
}

function print(runs) {
	const lines = ['', '[timing] every jest run of this session (s, per file, largest first):'];
	let wall = 0;
	for (const run of runs) {
		wall += run.wallMs;
		const cpuMs = run.files.reduce((sum, f) => sum + (f.phases.cpu?.ms ?? 0), 0);
		const cpu = cpuMs > 0 ? `, ${s(cpuMs)} s CPU over its files` : '';
		lines.push(`[timing] ${run.label}: ${s(run.wallMs)} s wall${cpu}, ${run.tests.passed} passed, ${run.tests.failed} failed`);
		for (const f of run.files.filter((file) => file.ms >= 10_000)) {
			const phases = KINDS.filter((k) => f.phases[k].count).map((k) => `${k} ${s(f.phases[k].ms)}`).join(', ');
			lines.push(`[timing]   ${String(s(f.ms)).padStart(5)}  ${f.file}${phases ? `  (${phases})` : ''}`);
		}
		const small = run.files.filter((file) => file.ms < 10_000);
		if (small.length) lines.push(`[timing]   ${String(s(small.reduce((a, f) => a + f.ms, 0))).padStart(5)}  ${small.length} files under 10 s`);
	}
	lines.push(`[timing] jest wall time over all runs: ${s(wall)} s`);
	console.log(lines.join('\n'));
}

/** Replaces the text between `<!-- timing:NAME -->` and `<!-- /timing:NAME -->` in the doc. */
function replaceSection(doc, name, body) {
	const open = `<!-- timing:${name} -->`;
	const close = `<!-- /timing:${name} -->`;
	const start = doc.indexOf(open);
	const end = doc.indexOf(close);
	if (start < 0 || end < start) return doc;
	return `${doc.slice(0, start + open.length)}\n${body}\n${doc.slice(end)}`;
}

const runs = load();
if (runs.length === 0) {
	console.log(`[timing] no timings-*.json in ${path.relative(REPO_ROOT, dir) || dir}`);
	process.exit(0);
}
print(runs);

if (writeDoc) {
	let doc = fs.readFileSync(DOC, 'utf8');
	for (const run of runs) doc = replaceSection(doc, run.label, table(run, { onlyOver: 10_000 }));
	fs.writeFileSync(DOC, doc);
	console.log(`[timing] wrote ${path.relative(REPO_ROOT, DOC)}`);
}

if (writeExpected) {
	// The sequencer's fallback order: every file's last measured time, from these runs (later runs win).
	const expected = { seconds: {} };
	for (const run of runs) {
		for (const f of run.files) expected.seconds[f.file] = Math.max(1, s(f.ms));
	}
	expected.note = 'Written by `node test/timing/summary.js <dir> --write-expected` from runs on a quiet machine; test/timing/sequencer.js starts the longest first, test/unit/testPlan.test.ts holds files over 60 s to a // Time: line.';
	expected.seconds = Object.fromEntries(Object.entries(expected.seconds).sort(([, a], [, b]) => b - a));
	fs.writeFileSync(EXPECTED, JSON.stringify({ note: expected.note, seconds: expected.seconds }, null, 2) + '\n');
	console.log(`[timing] wrote ${path.relative(REPO_ROOT, EXPECTED)}`);
}
