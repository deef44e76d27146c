#!/usr/bin/env node
// `npm test`: the checks, then jest. n8n-node lint runs beside clean → build → typecheck → scan → lint:workflows (the
// scan's tarball leg packs dist/); jest starts once all of them passed. Running the checks beside jest (2749311) took
// `npm test` from 794 to 752 s, but the extra load on two cores beside five jest workers let a queue-mode e2e file fail
// once (the e2e README, *Flakes*): CI that fails by chance lands nothing, so they run first again. The checks'
// output is shown whole before jest starts; jest's streams. Arguments go to jest.
import { spawn } from 'node:child_process';

function run(script) {
	return new Promise((resolve) => {
		const started = Date.now();
		const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
		let output = '';
		child.stdout.on('data', (chunk) => (output += chunk));
		child.stderr.on('data', (chunk) => (output += chunk));
		child.on('close', (code) => {
			const seconds = ((Date.now() - started) / 1000).toFixed(1);
			resolve({ script, code: code ?? 1, output, seconds });
		});
	});
}

/** Runs the scripts one after another, stopping at the first failure. */
async function lane(scripts) {
	const results = [];
	for (const script of scripts) {
		const result = await run(script);
		results.push(result);
		if (result.code !== 0) break;
	}
	return results;
}

function jest(args) {
	return new Promise((resolve) => {
		const child = spawn('npx', ['--no-install', 'jest', ...args], { stdio: 'inherit' });
		child.on('close', (code) => resolve(code ?? 1));
	});
}

const show = (results) => {
	for (const result of results) {
		process.stdout.write(`\n> npm run ${result.script}  (${result.seconds} s${result.code === 0 ? '' : `, exit ${result.code}`})\n`);
		process.stdout.write(result.output);
	}
};

const lint = lane(['lint']);
const build = await lane(['clean', 'build']);
const checks = build.every((result) => result.code === 0) ? await lane(['typecheck', 'scan', 'lint:workflows']) : [];
const checked = [...(await lint), ...build, ...checks];
show(checked);
const failed = checked.find((result) => result.code !== 0);
process.exit(failed ? failed.code : await jest(process.argv.slice(2)));
