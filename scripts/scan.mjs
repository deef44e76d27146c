#!/usr/bin/env node
// n8n's verification scan (@n8n/scan-community-package, pinned as a dev dependency), both of its legs, run locally the
// way the scanner runs them on a published version:
//   source leg:  the attested source checkout, SOURCE_FILE_PATTERNS (package.json, {nodes,credentials}/**/*.{js,ts,json})
//                with n8n's community-node rules and eslint-plugin-n8n-nodes-base's community/credentials/nodes sets;
//   tarball leg: the packed package (`npm pack`, extracted), its **/*.js and package.json.
// Only provenance and the download are left out: they need a published version.
//
//   node scripts/scan.mjs                   both legs on this checkout (the tarball leg needs dist/: npm run build)
//   node scripts/scan.mjs --source DIR      the source leg on DIR only
//   node scripts/scan.mjs --tarball-dir DIR the tarball leg on an already extracted package in DIR
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCANNER_VERSION = '0.32.0';
const SCANNER_DIR = path.join(ROOT, 'node_modules/@n8n/scan-community-package');
// analyzePackageByName() passes this list inline for the tarball leg (it exports only the source one).
const TARBALL_FILE_PATTERNS = ['**/*.js', 'package.json'];

function fail(message) {
	console.error(`scan: ${message}`);
	process.exit(1);
}

/** The pinned scanner, and a check that its legs are still the ones replicated here (an upgrade may change them). */
async function loadScanner() {
	const manifest = JSON.parse(fs.readFileSync(path.join(SCANNER_DIR, 'package.json'), 'utf8'));
	if (manifest.version !== SCANNER_VERSION) {
		fail(`@n8n/scan-community-package ${manifest.version} is installed, ${SCANNER_VERSION} expected (npm ci)`);
	}
	const file = path.join(SCANNER_DIR, 'scanner/scanner.mjs');
	const text = fs.readFileSync(file, 'utf8');
	for (const call of [
		'analyzePackage(sourceDir, SOURCE_FILE_PATTERNS)',
		"analyzePackage(packageDir, ['**/*.js', 'package.json'])", // TARBALL_FILE_PATTERNS
	]) {
		if (!text.includes(call)) fail(`the scanner no longer calls ${call}: update scripts/scan.mjs to its legs`);
	}
	// The scanner makes a temporary folder as it loads and never removes it: give it one that is removed on exit.
	const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-scanner-'));
	process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
	process.env.TMPDIR = scratch;
	return await import(file);
}

function report(leg, result) {
	if (result.passed) {
		console.log(`scan: ${leg} leg: no findings`);
		return true;
	}
	console.error(`scan: ${leg} leg: ${result.message}`);
	if (result.details) console.error(result.details);
	return false;
}

async function sourceLeg(scanner, dir) {
	return report('source', await scanner.analyzePackage(dir, scanner.SOURCE_FILE_PATTERNS));
}

async function tarballLeg(scanner, dir) {
	return report('tarball', await scanner.analyzePackage(dir, TARBALL_FILE_PATTERNS));
}

/** `npm pack` of this checkout, extracted into a fresh folder (removed by the caller). */
function packed() {
	if (!fs.existsSync(path.join(ROOT, 'dist/index.js'))) fail('dist/ is missing; run npm run build first');
	const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-scan-'));
	execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
	const tarball = fs.readdirSync(work).find((name) => name.endsWith('.tgz'));
	if (!tarball) fail('npm pack produced no tarball');
	const dir = path.join(work, 'package');
	fs.mkdirSync(dir);
	execFileSync('tar', ['-xzf', path.join(work, tarball), '-C', dir, '--strip-components=1']);
	return { dir, work };
}

const [flag, target] = process.argv.slice(2);
const scanner = await loadScanner();
let passed;
if (flag === '--source') {
	passed = await sourceLeg(scanner, path.resolve(target));
} else if (flag === '--tarball-dir') {
	passed = await tarballLeg(scanner, path.resolve(target));
} else if (flag === undefined) {
	const source = await sourceLeg(scanner, ROOT);
	const { dir, work } = packed();
	try {
		passed = (await tarballLeg(scanner, dir)) && source;
	} finally {
		fs.rmSync(work, { recursive: true, force: true });
	}
} else {
	fail(`unknown argument ${flag}`);
}
process.exit(passed ? 0 : 1);
