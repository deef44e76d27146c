// The test plan's own rules (issue 20, docs/testing.md): the 1.x smoke keeps its four proofs, a file measured over
// 60 s says why in its header, the scripts run what docs/testing.md says, and the timing reporter is on for every run.
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '../..');
const E2E = path.join(ROOT, 'test', 'e2e');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const e2eFiles = fs.readdirSync(E2E).filter((name) => name.endsWith('.e2e.test.ts'));

/** The names of the tests tagged for the 1.x smoke, per file: the string literal that ends with `(n8n1-smoke)`. */
function smokeTests(file: string): string[] {
	const text = fs.readFileSync(path.join(E2E, file), 'utf8');
	return [...text.matchAll(/(['"`])((?:(?!\1).)*\(n8n1-smoke\))\1/g)].map((match) => match[2]);
}

function header(file: string): string {
	const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
	const end = lines.findIndex((line) => !line.startsWith('//'));
	return lines.slice(0, end < 0 ? lines.length : end).join('\n');
}

describe('the test plan', () => {
	it('the 1.x smoke proves install and load, Video generate and wait, the durable resume and the agent tool call', () => {
		const smoke = Object.fromEntries(e2eFiles.map((file) => [file, smokeTests(file)]));
		const all = Object.values(smoke).flat();
		expect(all.some((name) => /as n8n's installer does/.test(name))).toBe(true);
		expect(smoke['install.e2e.test.ts'].some((name) => /a video is submitted, waited for and downloaded/.test(name))).toBe(true);
		expect(smoke['durable.e2e.test.ts'].some((name) => /killed while waiting and started again/.test(name))).toBe(true);
		expect(smoke['agent.e2e.test.ts'].some((name) => /the model calls Generate_Video once/.test(name))).toBe(true);
	});

	it('npm run test:e2e:n8n1 runs exactly the tagged tests on n8n 1.x; npm test runs every file with the workers', () => {
		const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
		expect(scripts['test:e2e:n8n1']).toBe('GEN_GATEWAY_E2E_N8N=1 jest test/e2e -t n8n1-smoke');
		expect(scripts.test).toMatch(/&& jest$/);
		expect(scripts.test).not.toMatch(/runInBand/);
	});

	it('every jest run reports its per-file times and starts the longest files first', () => {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const config = require(path.join(ROOT, 'jest.config.js'));
		expect(config.reporters).toEqual(['default', '<rootDir>/test/timing/reporter.js']);
		expect(config.testSequencer).toBe('<rootDir>/test/timing/sequencer.js');
	});

	it('a test file measured over 60 s says why in a `// Time:` line of its header', () => {
		const expected = JSON.parse(read('test/timing/expected.json')).seconds as Record<string, number>;
		const long = Object.entries(expected).filter(([file, seconds]) => seconds > 60 && fs.existsSync(path.join(ROOT, file)));
		expect(long.length).toBeGreaterThan(0);
		const unexplained = long.filter(([file]) => !/^\/\/ Time:/m.test(header(file))).map(([file]) => file);
		expect(unexplained).toEqual([]);
	});
});
