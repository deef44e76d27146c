#!/usr/bin/env node
// `npm test`: the checks and jest, overlapped. jest needs only a fresh dist/ (the e2e homes install the packed build),
// so it starts as soon as `clean → build` is done, and the other checks run beside it: n8n-node lint from the start,
// then typecheck → scan → lint:workflows (the scan's tarball leg packs dist/). One after the other they held jest back
// for 60–90 s on two cores, while jest itself leaves a core idle for a quarter of its run (its e2e files wait on n8n).
// jest's output streams as it runs; each check's output is shown whole after jest ends. The exit status is jest's, else
// the first failed check's (a failed build runs no jest), once everything started has ended. Arguments go to jest.
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
let status = build.find((result) => result.code !== 0)?.code ?? 0;
let after = [];
if (status !== 0) {
	show(build);
} else {
	const checks = lane(['typecheck', 'scan', 'lint:workflows']);
	const jestStatus = await jest(process.argv.slice(2));
	after = await checks;
	status = jestStatus;
	show(build);
}
const ended = [...(await lint), ...after];
show(ended);
for (const result of ended) if (result.code !== 0 && status === 0) status = result.code;
process.exit(status);
