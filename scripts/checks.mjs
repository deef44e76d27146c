#!/usr/bin/env node
// The checks `npm test` runs before jest, in two lanes at once: n8n-node lint (one core, about 25 s) beside
// typecheck → clean → build → scan → lint:workflows (each step needs the one before: the scan's tarball leg packs
// dist/). One after the other they left a core idle for about a minute. Each lane's output is shown whole when it ends
// (lint first); the exit status is the first failure's, after both lanes ended.
import { spawn } from 'node:child_process';

const LANES = [['lint'], ['typecheck', 'clean', 'build', 'scan', 'lint:workflows']];

function run(script) {
	return new Promise((resolve) => {
		const started = Date.now();
		const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
		let output = '';
		child.stdout.on('data', (chunk) => (output += chunk));
		child.stderr.on('data', (chunk) => (output += chunk));
		child.on('close', (code, signal) => {
			const seconds = ((Date.now() - started) / 1000).toFixed(1);
			resolve({ script, code: code ?? 1, signal, output, seconds });
		});
	});
}

async function lane(scripts) {
	const results = [];
	for (const script of scripts) {
		const result = await run(script);
		results.push(result);
		if (result.code !== 0) break;
	}
	return results;
}

const lanes = await Promise.all(LANES.map(lane));
let status = 0;
for (const result of lanes.flat()) {
	process.stdout.write(`\n> npm run ${result.script}  (${result.seconds} s${result.code === 0 ? '' : `, exit ${result.code}`})\n`);
	process.stdout.write(result.output);
	if (result.code !== 0 && status === 0) status = result.code;
}
process.exit(status);
