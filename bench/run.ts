// `npm run bench`: the four performance benchmarks of issue 7 against a real n8n and the mock service over loopback.
// Prints a table, writes bench/results.json (BENCH_QUICK=1: a smaller, faster run into bench/.work/) and, after a
// full run, the table in docs/performance.md.
// BENCH_ONLY=memory,batch,overhead runs a subset (results go to bench/.work/results.partial.json).
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { REPO_ROOT, type N8nHome } from '../test/e2e/n8n';
import type { MockClient } from '../test/mock/process';
import { benchBatch } from './batch';
import { machineOf, sourceOf } from './provenance';
import { KNOWN_CAUSES, UNEXPLAINED } from './causes';
import { benchConfig } from './config';
import { benchMemory } from './memory';
import { benchOverhead } from './overhead';
import { readmeBlock, README_END, README_START } from './readme';
import { renderMachine, renderTable, type BenchResults, type Figure } from './figures';
import { benchHome, bufferedHome, startMock, WORK_DIR } from './setup';

const BENCHES = ['memory', 'overhead', 'batch'] as const;
type BenchName = (typeof BENCHES)[number];

function log(line: string): void {
	process.stderr.write(`${line}\n`);
}

function selected(): BenchName[] {
	const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim()).filter(Boolean);
	if (!only) return [...BENCHES];
	const unknown = only.filter((name) => !(BENCHES as readonly string[]).includes(name));
	if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown ${unknown.join(', ')}; known: ${BENCHES.join(', ')}`);
	return BENCHES.filter((name) => only.includes(name));
}

/** Rewrites docs/performance.md's table between its markers, under the lock every writer of shared files takes. */
function updateReadme(block: string): boolean {
	const readme = path.join(REPO_ROOT, 'docs', 'performance.md');
	if (!fs.readFileSync(readme, 'utf8').includes(README_START)) return false;
	const blockFile = path.join(WORK_DIR, 'readme-block.md');
	fs.writeFileSync(blockFile, block);
	const script = `
		const fs = require('fs');
		const [file, blockFile, start, end] = process.argv.slice(1);
		const text = fs.readFileSync(file, 'utf8');
		const a = text.indexOf(start), b = text.indexOf(end);
		if (a < 0 || b < a) process.exit(3);
		fs.writeFileSync(file, text.slice(0, a + start.length) + '\\n' + fs.readFileSync(blockFile, 'utf8') + '\\n' + text.slice(b));
	`;
	execFileSync('flock', ['/tmp/pkg.lock', process.execPath, '-e', script, readme, blockFile, README_START, README_END]);
	return true;
}

async function main(): Promise<void> {
	const started = Date.now();
	const config = benchConfig();
	const benches = selected();
	const complete = benches.length === BENCHES.length;
	fs.mkdirSync(WORK_DIR, { recursive: true });
	const loads = [os.loadavg()[0]];
	const loadTimer = setInterval(() => loads.push(os.loadavg()[0]), 5000);
	log(`bench: ${config.quick ? 'QUICK' : 'full'} run of ${benches.join(', ')}; load average ${loads[0].toFixed(2)}`);

	let mock: MockClient | undefined;
	const homes: N8nHome[] = [];
	const figures: Figure[] = [];
	const details: Record<string, unknown> = {};
	let n8nVersion = '';
	try {
		mock = await startMock();
		const plain = await benchHome(mock);
		homes.push(plain.home);
		n8nVersion = plain.home.install.version;
		for (const bench of benches) {
			log(`bench ${bench}:`);
			let outcome: { figures: Figure[]; details: unknown };
			if (bench === 'memory') {
				const buffered = await bufferedHome(mock);
				homes.push(buffered.home);
				outcome = await benchMemory(config, mock, { plain, buffered }, log);
			} else if (bench === 'overhead') {
				outcome = await benchOverhead(config, mock, plain, log);
			} else {
				outcome = await benchBatch(config, mock, plain, log);
			}
			figures.push(...outcome.figures);
			details[bench] = outcome.details;
		}
	} finally {
		clearInterval(loadTimer);
		await mock?.stop();
		for (const home of homes) await home.dispose();
	}
	loads.push(os.loadavg()[0]);

	figures.sort((a, b) => a.bench - b.bench);
	for (const figure of figures) {
		if (figure.target && !figure.met) figure.cause = KNOWN_CAUSES[figure.id] ?? UNEXPLAINED;
	}
	const results: BenchResults = {
		schema: 1,
		date: new Date().toISOString(),
		quick: config.quick,
		machine: machineOf(n8nVersion, loads),
		source: sourceOf(),
		config,
		durationSeconds: Math.round((Date.now() - started) / 1000),
		figures,
		details,
	};

	const target = config.quick
		? path.join(WORK_DIR, 'results.quick.json')
		: complete
			? path.join(REPO_ROOT, 'bench', 'results.json')
			: path.join(WORK_DIR, 'results.partial.json');
	fs.writeFileSync(target, `${JSON.stringify(results, null, '\t')}\n`);
	process.stdout.write(`\n${renderMachine(results)}\n\n${renderTable(results)}\n\n`);
	const missed = figures.filter((figure) => figure.target && !figure.met);
	for (const figure of missed) process.stdout.write(`MISSED: ${figure.label}: ${figure.value}. Cause: ${figure.cause}\n`);
	process.stdout.write(`Wrote ${path.relative(process.cwd(), target)} in ${results.durationSeconds} s.\n`);
	if (!config.quick && complete) {
		const updated = updateReadme(readmeBlock(results));
		process.stdout.write(updated ? 'Updated the table in docs/performance.md.\n' : 'docs/performance.md has no bench markers; table not written there.\n');
	}
	if (missed.some((figure) => figure.cause === UNEXPLAINED)) {
		process.stdout.write('An unexplained miss fails test/unit/bench.results.test.ts: find its cause and fix it (bench/README.md).\n');
	}
}

main().catch((error: unknown) => {
	process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
	process.exit(1);
});
