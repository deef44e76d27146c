#!/usr/bin/env node
// prepublishOnly: a release is published by .github/workflows/publish.yml only, from GitHub Actions with npm
// provenance. n8n's verification requires provenance (its scan lints the source commit the attestation names), so a
// publish from a laptop would be a version n8n can never verify. The project's .npmrc turns scripts off, so `npm
// publish` skips this script unless run with --ignore-scripts=false (as publish.yml does); package.json's
// publishConfig.provenance makes npm itself refuse to publish anywhere it cannot attest the build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const env = process.env;
// --provenance on the command line reaches scripts as npm_config_provenance; NPM_CONFIG_PROVENANCE is inherited.
const flag = env.npm_config_provenance ?? env.NPM_CONFIG_PROVENANCE;
const provenance = flag === undefined ? manifest.publishConfig?.provenance === true : flag === 'true';

const problems = [];
if (env.GITHUB_ACTIONS !== 'true') problems.push('not running in GitHub Actions (GITHUB_ACTIONS is not "true")');
if (!provenance) problems.push('npm provenance is off (no --provenance, NPM_CONFIG_PROVENANCE or publishConfig.provenance)');
if (problems.length > 0) {
	console.error(`Refusing to publish: ${problems.join('; ')}.`);
	console.error('Releases go out from .github/workflows/publish.yml: push a tag vX.Y.Z matching package.json\'s version.');
	process.exit(1);
}
console.log('prepublishOnly: publishing from GitHub Actions with npm provenance');
