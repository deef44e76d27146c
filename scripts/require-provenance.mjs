#!/usr/bin/env node
// prepublishOnly: a release is published by .github/workflows/publish.yml only, from GitHub Actions with npm
// provenance. n8n's verification requires provenance (its scan lints the source commit the attestation names), so a
// publish from a laptop would be a version n8n can never verify. The project's .npmrc turns scripts off, so `npm
// publish` skips this script unless run with --ignore-scripts=false (as publish.yml does); package.json's
// publishConfig.provenance makes npm itself refuse to publish anywhere it cannot attest the build.
//
// One override, which publish.yml never sets, for the release rehearsal (npm run test:release, docs/releasing.md):
// GEN_GATEWAY_REHEARSAL_REGISTRY=<address of an npm registry on loopback>. It lets a publish through without GitHub
// Actions and without provenance only when that address is loopback (127.0.0.0/8, ::1, localhost), npm publishes to
// exactly that registry (npm_config_registry, no publishConfig.registry), and the run is not in GitHub Actions: what
// it publishes can reach no one but the machine it runs on.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const env = process.env;
// --provenance on the command line reaches scripts as npm_config_provenance; NPM_CONFIG_PROVENANCE is inherited.
const flag = env.npm_config_provenance ?? env.NPM_CONFIG_PROVENANCE;
const provenance = flag === undefined ? manifest.publishConfig?.provenance === true : flag === 'true';

const rehearsal = env.GEN_GATEWAY_REHEARSAL_REGISTRY;
if (rehearsal !== undefined) {
	const target = env.npm_config_registry;
	const refusals = [];
	if (!isLoopback(rehearsal)) refusals.push(`GEN_GATEWAY_REHEARSAL_REGISTRY=${rehearsal} is not a loopback address`);
	if (manifest.publishConfig?.registry !== undefined) refusals.push('package.json names a publishConfig.registry');
	if (target === undefined || withSlash(target) !== withSlash(rehearsal)) {
		refusals.push(`npm publishes to ${target ?? 'its default registry'}, not to ${rehearsal}`);
	}
	if (env.GITHUB_ACTIONS === 'true') refusals.push('the rehearsal override is never used in GitHub Actions');
	if (refusals.length > 0) {
		console.error(`Refusing to publish: ${refusals.join('; ')}.`);
		process.exit(1);
	}
	console.log(`prepublishOnly: REHEARSAL publish to the loopback registry ${rehearsal}, without provenance (never a release)`);
	process.exit(0);
}

const problems = [];
if (env.GITHUB_ACTIONS !== 'true') problems.push('not running in GitHub Actions (GITHUB_ACTIONS is not "true")');
if (!provenance) problems.push('npm provenance is off (no --provenance, NPM_CONFIG_PROVENANCE or publishConfig.provenance)');
if (problems.length > 0) {
	console.error(`Refusing to publish: ${problems.join('; ')}.`);
	console.error('Releases go out from .github/workflows/publish.yml: push a tag vX.Y.Z matching package.json\'s version.');
	process.exit(1);
}
console.log('prepublishOnly: publishing from GitHub Actions with npm provenance');

function withSlash(url) {
	return url.endsWith('/') ? url : `${url}/`;
}

function isLoopback(address) {
	let url;
	try {
		url = new URL(address);
	} catch {
		return false;
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
	const host = url.hostname.replace(/^\[|\]$/g, '');
	return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
