/**
 * A small seeded PRNG for the fuzz tests, so every failure reproduces: the seed is printed, and FUZZ_SEED=<n> runs
 * the same sets again (FUZZ_RUNS=<n> changes how many).
 */

export interface Random {
	readonly seed: number;
	/** [0, 1) */
	next(): number;
	/** An integer in [min, max]. */
	int(min: number, max: number): number;
	chance(p: number): boolean;
	pick<T>(items: readonly T[]): T;
	/** Picks by weight: [[weight, value], …]. */
	weighted<T>(entries: ReadonlyArray<readonly [number, T]>): T;
}

/** mulberry32: 32-bit state, good enough spread for picking test inputs, and tiny. */
export function createRandom(seed: number): Random {
	let state = seed >>> 0;
	const next = () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	const random: Random = {
		seed,
		next,
		int: (min, max) => min + Math.floor(next() * (max - min + 1)),
		chance: (p) => next() < p,
		pick: (items) => items[Math.floor(next() * items.length)],
		weighted: (entries) => {
			const total = entries.reduce((sum, [weight]) => sum + weight, 0);
			let roll = next() * total;
			for (const [weight, value] of entries) {
				roll -= weight;
				if (roll < 0) return value;
			}
			return entries[entries.length - 1][1];
		},
	};
	return random;
}

/** FUZZ_SEED when set (to reproduce a failure), otherwise a fresh seed per run. */
export function fuzzSeed(): number {
	const fromEnv = Number(process.env.FUZZ_SEED);
	if (process.env.FUZZ_SEED && Number.isInteger(fromEnv)) return fromEnv >>> 0;
	return Math.floor(Math.random() * 2 ** 32) >>> 0;
}

/** FUZZ_RUNS when set, otherwise `fallback`. */
export function fuzzRuns(fallback: number): number {
	const fromEnv = Number(process.env.FUZZ_RUNS);
	return process.env.FUZZ_RUNS && Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : fallback;
}
