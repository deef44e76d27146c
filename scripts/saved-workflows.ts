/**
 * Makes the saved-workflow fixtures of a NEW version: test/fixtures/workflows/<version>/<name>.json (each workflow of
 * test/support/savedWorkflows/spec.ts as n8n's editor saves it with the current code) and <name>.expected.json (the
 * requests it sends to the mock, recorded by running it once with the current code).
 *
 *   npx ts-node --transpile-only scripts/saved-workflows.ts [--version X.Y.Z]   (default: package.json's version)
 *
 * It refuses a folder that exists: a committed folder is what users of that version saved, and the test compares the
 * current code against it. Run it once per release, review the diff against the previous folder, commit the folder.
 * See docs/upgrading.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { spawnMockProcess } from '../test/mock/process';
import { buildSavedWorkflow } from '../test/support/savedWorkflows/build';
import { normalisedOutputs, normalisedRequests, runSaved } from '../test/support/savedWorkflows/run';
import type { Expected } from '../test/support/savedWorkflows/run';
import { SPEC } from '../test/support/savedWorkflows/spec';

const root = path.resolve(__dirname, '..');

async function main() {
	const args = process.argv.slice(2);
	const at = args.indexOf('--version');
	const version =
		at >= 0 ? args[at + 1] : (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
	if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version ?? '')) throw new Error(`not a version: ${version}`);
	const folder = path.join(root, 'test/fixtures/workflows', version);
	if (existsSync(folder)) {
		throw new Error(`${path.relative(root, folder)} exists: a released version's fixtures are never re-recorded (docs/upgrading.md)`);
	}

	const mock = await spawnMockProcess({ apiKey: 'saved-workflows-key-0123456789' });
	try {
		const files: Array<[string, unknown]> = [];
		for (const spec of SPEC) {
			const workflow = buildSavedWorkflow(spec, version);
			await mock.reset();
			const run = await runSaved(workflow, mock, spec.toolCalls);
			const error = run.data.resultData.error;
			if (error) throw new Error(`${spec.file}: the run failed, nothing written: ${error.message}`);
			const expected: Expected = {
				...(spec.toolCalls ? { toolCalls: spec.toolCalls } : {}),
				requests: normalisedRequests(await mock.log()),
				outputs: normalisedOutputs(run, workflow.nodes),
			};
			files.push([`${spec.file}.json`, workflow], [`${spec.file}.expected.json`, expected]);
			console.log(`${spec.file}: ${workflow.nodes.length} nodes, ${expected.requests.length} requests`);
		}
		mkdirSync(folder, { recursive: true });
		for (const [name, content] of files) writeFileSync(path.join(folder, name), `${JSON.stringify(content, null, 2)}\n`);
		console.log(`wrote ${files.length} files to ${path.relative(root, folder)}`);
	} finally {
		await mock.stop();
	}
}

main().then(
	() => process.exit(0),
	(error: Error) => {
		console.error(error.message);
		process.exit(1);
	},
);
