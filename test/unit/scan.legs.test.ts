/**
 * `npm run scan` (scripts/scan.mjs) must be able to fail: each leg of n8n's verification scan is run on a tiny package
 * with one finding that n8n's scanner reports, and on the same package without it. A leg that lints nothing, or with
 * the wrong rule sets, would pass the bad package and this test would fail.
 */
import { spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';

const ROOT = resolve(__dirname, '../..');
const SCAN = join(ROOT, 'scripts/scan.mjs');

let work: string;
beforeAll(() => {
	work = mkdtempSync(join(tmpdir(), 'gen-gateway-scan-fixture-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A package folder: this package's own package.json plus the given files. */
function fixture(name: string, files: Record<string, string>): string {
	const dir = join(work, name);
	const all = { 'package.json': readFileSync(join(ROOT, 'package.json'), 'utf8'), ...files };
	for (const [file, text] of Object.entries(all)) {
		mkdirSync(dirname(join(dir, file)), { recursive: true });
		writeFileSync(join(dir, file), text);
	}
	return dir;
}

function scan(flag: '--source' | '--tarball-dir', dir: string) {
	const run = spawnSync(process.execPath, [SCAN, flag, dir], { encoding: 'utf8', timeout: 60_000 });
	return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const helper = (rethrow: string) => `import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

export async function run(node: INode, work: () => Promise<void>): Promise<void> {
	try {
		await work();
	} catch (error) {
		${rethrow}
	}
}
`;

/** An options parameter with five options (n8n's lint sorts lists of five or more), named in the given order. */
const property = (...names: string[]) => `import type { INodeProperties } from 'n8n-workflow';

export const mode: INodeProperties = {
	displayName: 'Mode',
	name: 'mode',
	type: 'options',
	default: 'a',
	description: 'How to run',
	options: [
${names.map((name) => `\t\t{ name: '${name}', value: '${name.toLowerCase()}' },`).join('\n')}
	],
};
`;

describe('source leg (the attested source: package.json and nodes/, credentials/)', () => {
	it('passes a clean package', () => {
		const dir = fixture('clean', {
			'nodes/Sample/run.ts': helper('throw new NodeOperationError(node, error as Error);'),
			'nodes/Sample/mode.ts': property('A', 'B', 'C', 'D', 'E'),
		});
		const result = scan('--source', dir);
		expect(result.output).toContain('source leg: no findings');
		expect(result.status).toBe(0);
	});

	it("reports a caught error re-thrown as is (n8n's community-node rules)", () => {
		const dir = fixture('rethrow', { 'nodes/Sample/run.ts': helper('throw error;') });
		const result = scan('--source', dir);
		expect(result.status).toBe(1);
		expect(result.output).toContain('@n8n/community-nodes/require-node-api-error');
		expect(result.output).toContain('run.ts');
	});

	it("reports unsorted options (eslint-plugin-n8n-nodes-base's node rules, which only the source leg applies)", () => {
		const dir = fixture('unsorted', { 'nodes/Sample/mode.ts': property('A', 'B', 'C', 'E', 'D') });
		const result = scan('--source', dir);
		expect(result.status).toBe(1);
		expect(result.output).toContain('n8n-nodes-base/node-param-options-type-unsorted-items');
	});

	it('lints only what the scanner lints: the same finding outside nodes/ and credentials/ is not reported', () => {
		const dir = fixture('outside', { 'test/run.ts': helper('throw error;') });
		expect(scan('--source', dir).status).toBe(0);
	});
});

describe('tarball leg (the packed package: **/*.js and package.json)', () => {
	const compiled = (body: string) => `"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\n${body}\n`;

	it('passes clean compiled code', () => {
		const dir = fixture('dist-clean', { 'dist/index.js': compiled('exports.answer = 42;') });
		const result = scan('--tarball-dir', dir);
		expect(result.output).toContain('tarball leg: no findings');
		expect(result.status).toBe(0);
	});

	it('reports a restricted global in compiled code', () => {
		const dir = fixture('dist-env', { 'dist/index.js': compiled('exports.key = process.env.API_KEY;') });
		const result = scan('--tarball-dir', dir);
		expect(result.status).toBe(1);
		expect(result.output).toContain('@n8n/community-nodes/no-restricted-globals');
	});
});
