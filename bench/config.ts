// What `npm run bench` measures, and the smaller set BENCH_QUICK=1 runs while developing.

export interface BenchConfig {
	quick: boolean;
	memory: {
		/** Artifact size the mock serves (MiB). */
		sizeMiB: number;
		/** Rounds of (baseline, Video node, HTTP Request node, buffered download), interleaved. */
		rounds: number;
	};
	batch: {
		items: number;
		/** T: how long each task runs at the mock (s), from submission to SUCCESS. */
		taskSeconds: number;
		/** The node's default poll interval (s); the workflows leave it unset. */
		pollSeconds: number;
		/** Runs of the whole batch with the default concurrency. */
		rounds: number;
		/** Items of the one-at-a-time run (extrapolated to `items`: 20 × 20 s would take 7 minutes). */
		serialItems: number;
	};
	overhead: {
		sizeMiB: number;
		/** Rounds of (node, curl) on the same task. */
		rounds: number;
	};
}

export const FULL: BenchConfig = {
	quick: false,
	memory: { sizeMiB: 512, rounds: 5 },
	batch: { items: 20, taskSeconds: 20, pollSeconds: 5, rounds: 3, serialItems: 3 },
	overhead: { sizeMiB: 100, rounds: 9 },
};

export const QUICK: BenchConfig = {
	quick: true,
	memory: { sizeMiB: 64, rounds: 2 },
	batch: { items: 10, taskSeconds: 5, pollSeconds: 5, rounds: 2, serialItems: 2 },
	overhead: { sizeMiB: 20, rounds: 2 },
};

export function benchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
	return env.BENCH_QUICK === '1' ? QUICK : FULL;
}

export const MiB = 1024 * 1024;
