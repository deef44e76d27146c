// Time: ~3 s (fake clock: minutes of a rate-limited key in milliseconds)
/**
 * The pacer's start and its pace on a key that other processes share (queue-mode workers, a PaceState each), on
 * test/support/paceWorld.ts's fake key: a token bucket as the mock's, seeded latencies, a 429 waited out.
 */
import fc from 'fast-check';

import { Pacer } from '../../nodes/shared/transport/pacer';
import { equalShares, onOneKey } from '../support/paceWorld';

/** A pacer on a clock that moves only when told. */
function still() {
	let now = 1_000_000;
	const pacer = new Pacer(() => now);
	const sleep = async (ms: number) => {
		now += ms;
		await Promise.resolve();
	};
	return { pacer, sleep, advance: (ms: number) => (now += ms), clock: () => now };
}

describe('the first 429', () => {
	it('before any answer: the pace starts at what the burst got through (8 at once, 2 refused: 5.8, was 0.97)', async () => {
		const { pacer, sleep, advance, clock } = still();
		for (let i = 0; i < 8; i++) await pacer.acquire(sleep, 'submit');
		const grantedAt = clock();
		// The refusals come back before any answer (a 429 is quick); the 6 others are accepted later.
		advance(20);
		pacer.onLimited(1000, grantedAt);
		advance(2);
		pacer.onLimited(1000, grantedAt);
		expect(pacer.rate).toBeCloseTo(6 * 0.97, 1);
		expect(pacer.state.shared).toBe(false);
	});

	it('a burst refused whole: another process takes from the key (alone, a full bucket lets one through at least)', async () => {
		for (const [granted, refused, shared] of [
			[5, 4, false],
			[5, 5, true],
			[2, 2, true],
			[1, 1, false],
		] as const) {
			const { pacer, sleep, advance, clock } = still();
			for (let i = 0; i < granted; i++) await pacer.acquire(sleep, 'submit');
			const grantedAt = clock();
			advance(20);
			for (let i = 0; i < refused; i++) pacer.onLimited(1000, grantedAt);
			expect({ granted, refused, shared: pacer.state.shared }).toEqual({ granted, refused, shared });
		}
	});

	it('a worker alone on its key never takes it for shared, whatever its limit, lanes and latencies', async () => {
		await fc.assert(
			fc.asyncProperty(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 30 }), fc.nat(10_000), fc.nat(1500), async (limit, lanes, seed, spreadMs) => {
				const run = await onOneKey({ limit, lanes, seed, spreadMs, workers: [{ requests: limit * 90 }] });
				expect(run.shared).toEqual([false]);
			}),
			{ numRuns: 40 },
		);
	});
});

describe('two queue workers with equal shares of a batch on one key (each pacing by itself)', () => {
	it('end within 1.15x the floor (1.08x at the 90th percentile), the second starting up to 3 s later', async () => {
		const runs = [];
		for (const limit of [5, 10, 20]) for (const lanes of [5, 10, 25]) for (let seed = 1; seed <= 8; seed++) runs.push(await equalShares({ limit, lanes, seed }));
		const ratios = runs.map((run) => run.ratio).sort((a, b) => a - b);
		const refused = runs.map((run) => run.refusedAfterStart);
		// Measured on these 72 runs: max 1.11, 90th percentile 1.07, median 1.02; after the start 2.3% refused on average,
		// 5.4% at most. Before (a 429 set the pace to 0.97 requests/s until answers came, each worker crept past the limit
		// it found, a moved limit was looked for only 3% past it): max 1.37, 90th percentile 1.23, 1.1% refused.
		expect(ratios[ratios.length - 1]).toBeLessThanOrEqual(1.15);
		expect(ratios[Math.floor(0.9 * ratios.length)]).toBeLessThanOrEqual(1.08);
		expect(refused.reduce((sum, share) => sum + share, 0) / refused.length).toBeLessThanOrEqual(0.03);
		expect(Math.max(...refused)).toBeLessThanOrEqual(0.07);
	});

	it('the worker left takes the whole key within 45 s of the other stopping at 2 requests/s, 20 s at 10 and 20', async () => {
		for (const limit of [2, 10, 20]) {
			const run = await onOneKey({ limit, lanes: 10, seed: limit, workers: [{ requests: Infinity, stopMs: 60_000 }, { requests: Infinity, startMs: 1500, stopMs: 140_000 }] });
			const rateOfSecond = (from: number, to: number) => run.acceptedAt[1].filter((at) => at >= from * 1000 && at < to * 1000).length / (to - from);
			// Measured: 1.8, 10 and 20 requests/s (2/s: the one left probes after 40 s at most, as one alone).
			expect(rateOfSecond(limit > 2 ? 80 : 105, 140)).toBeGreaterThanOrEqual(0.85 * limit);
		}
	});
});
