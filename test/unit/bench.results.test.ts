// bench/results.json (written by `npm run bench`, never by hand) must be a full run whose every figure follows from
// its own samples, meets its target or says why not, is physically plausible, and is what docs/performance.md shows.
import { readFileSync } from 'fs';
import { resolve } from 'path';

import { FULL } from '../../bench/config';
import { UNEXPLAINED } from '../../bench/causes';
import { readmeBlock, README_END, README_START } from '../../bench/readme';
import { aggregate, expectedTargets, meets, roundTo, type BenchResults, type Figure } from '../../bench/figures';

const root = resolve(__dirname, '../..');
const results = JSON.parse(readFileSync(resolve(root, 'bench/results.json'), 'utf8')) as BenchResults;
const figure = (id: string): Figure => {
	const found = results.figures.find((entry) => entry.id === id);
	if (!found) throw new Error(`bench/results.json has no figure ${id}`);
	return found;
};

describe('bench/results.json', () => {
	it('is a full run (not BENCH_QUICK, not a subset) with its date, machine and load', () => {
		expect(results.schema).toBe(1);
		expect(results.quick).toBe(false);
		expect(results.config).toEqual(FULL);
		const date = Date.parse(results.date);
		expect(Number.isNaN(date)).toBe(false);
		expect(date).toBeLessThanOrEqual(Date.now());
		expect(results.machine.cpus).toBeGreaterThanOrEqual(1);
		expect(results.machine.n8n).toMatch(/^\d+\.\d+\.\d+$/);
		for (const load of Object.values(results.machine.loadAverage)) expect(Number.isFinite(load)).toBe(true);
		expect(results.source.commit).toMatch(/^[0-9a-f]{40}$/);
	});

	it('has every figure of issue 7, each with the target the issue sets (targets cannot be loosened here)', () => {
		for (const [id, target] of Object.entries(expectedTargets(FULL))) {
			expect({ id, target: figure(id).target }).toEqual({ id, target });
		}
	});

	it.each(results.figures.map((entry) => [entry.id, entry] as const))(
		'%s is the aggregate of its samples and meets its target or names the cause',
		(_, entry) => {
			expect(entry.samples.length).toBeGreaterThan(0);
			for (const sample of entry.samples) expect(Number.isFinite(sample)).toBe(true);
			expect(entry.value).toBe(roundTo(aggregate(entry.aggregate, entry.samples), entry.digits));
			expect(entry.how.length).toBeGreaterThan(20);
			if (!entry.target) {
				expect(entry.met).toBeUndefined();
				return;
			}
			expect(entry.met).toBe(meets(entry.value, entry.target));
			if (!entry.met) {
				expect(typeof entry.cause).toBe('string');
				expect(entry.cause).not.toBe(UNEXPLAINED);
				expect(entry.cause!.length).toBeGreaterThan(40);
			}
		},
	);

	it('is physically plausible (a broken sampler or typed-in numbers would not be)', () => {
		const { batch, memory } = FULL;
		// A download that buffers 512 MiB must show at least that much; streaming must show less than buffering.
		expect(figure('memory.bufferedAdded').value).toBeGreaterThan(memory.sizeMiB * 0.9);
		expect(figure('memory.videoAdded').value).toBeLessThan(figure('memory.bufferedAdded').value);
		expect(figure('memory.baselinePeak').value).toBeGreaterThan(100);
		// Nothing finishes before its tasks do; one at a time takes at least items × T.
		expect(Math.min(...figure('batch.parallelSeconds').samples)).toBeGreaterThanOrEqual(batch.taskSeconds);
		expect(figure('batch.serialSeconds').value).toBeGreaterThanOrEqual(batch.items * batch.taskSeconds);
		expect(figure('batch.oneRequestSeconds').value).toBeGreaterThanOrEqual(batch.taskSeconds);
		// The first poll is immediate and the task runs T seconds: at least T / poll + 1 status requests.
		expect(Math.min(...figure('polling.statusRequestsPerTask').samples)).toBeGreaterThanOrEqual(
			Math.floor(batch.taskSeconds / batch.pollSeconds) + 1,
		);
		expect(figure('polling.statusRequestsPerTask').samples).toHaveLength(batch.items * batch.rounds);
		expect(Math.min(...figure('latency.afterSuccessBeyondTransfer').samples)).toBeGreaterThanOrEqual(0);
		expect(figure('overhead.curlMs').value).toBeGreaterThan(0);
		expect(figure('overhead.ratio').samples).toHaveLength(FULL.overhead.rounds);
	});

	it('is what docs/performance.md shows', () => {
		const readme = readFileSync(resolve(root, 'docs/performance.md'), 'utf8');
		const start = readme.indexOf(README_START);
		const end = readme.indexOf(README_END);
		expect(start).toBeGreaterThan(0);
		expect(readme.slice(start + README_START.length, end).trim()).toBe(readmeBlock(results).trim());
	});
});
