// What `npm run bench:scale` runs (issue 22), and the smaller set SCALE_QUICK=1 runs while developing.

export interface BatchCase {
	/** N: prompts in the one execution. */
	items: number;
	/** T: each task's time at the mock, submission to SUCCESS (s); tasks spread ± `spreadSeconds` around it. */
	taskSeconds: number;
	spreadSeconds: number;
	/** R: the service's limit, requests per second per key. */
	rateLimit: number;
}

export interface ScaleConfig {
	quick: boolean;
	/** Case 1: in-process wait (Generate, Wait for Completion) at 20 req/s. */
	large: BatchCase;
	/** Case 1: the tight limit (2 req/s) that made a whole run fail before. */
	tight: BatchCase;
	/** Case 1: the durable wait (Generate without waiting → Wait → Check loop), at the large case's sizes. */
	durable: BatchCase & { waitSeconds: number };
	/** Case 1: memory with `downloads` downloads of `sizeMiB` in flight at once (throttled so they overlap). */
	memory: { downloads: number; sizeMiB: number; bytesPerSecond: number };
	/** Case 3: the same batch with n8n's HTTP Request node + Wait + IF (examples/video-batch-http-request-loop.json). */
	httpLoop: BatchCase & { waitSeconds: number };
	/** Case 4: one download's cost. */
	download: { sizeMiB: number; rounds: number };
	/** Case 2 (queue mode) only with SCALE_QUEUE=1. */
	queue: { executions: number; itemsPerExecution: number; taskSeconds: number; rateLimit: number; workers: number; concurrency: number };
	/**
	 * Case 2's pace (issue 39), only with SCALE_QUEUE=1 or SCALE_ONLY=queuePace: `executions` webhook executions ×
	 * `itemsPerExecution` prompts through Generate with Wait for Completion, 2 workers, one key; nothing killed.
	 */
	queuePace: QueuePaceCase;
}

export interface QueuePaceCase {
	executions: number;
	itemsPerExecution: number;
	taskSeconds: number;
	spreadSeconds: number;
	rateLimit: number;
	/** Each of the 2 workers' `--concurrency`. */
	concurrency: number;
}

/** The queue pace case as one batch of N = executions × itemsPerExecution prompts (for its prompts and floor). */
export function queuePaceBatch(spec: QueuePaceCase): BatchCase {
	const { executions, itemsPerExecution, taskSeconds, spreadSeconds, rateLimit } = spec;
	return { items: executions * itemsPerExecution, taskSeconds, spreadSeconds, rateLimit };
}

export const FULL: ScaleConfig = {
	quick: false,
	large: { items: 1000, taskSeconds: 60, spreadSeconds: 3, rateLimit: 20 },
	tight: { items: 200, taskSeconds: 30, spreadSeconds: 2, rateLimit: 2 },
	durable: { items: 1000, taskSeconds: 60, spreadSeconds: 3, rateLimit: 20, waitSeconds: 70 },
	memory: { downloads: 20, sizeMiB: 10, bytesPerSecond: 4 * 1024 * 1024 },
	httpLoop: { items: 200, taskSeconds: 30, spreadSeconds: 2, rateLimit: 2, waitSeconds: 30 },
	download: { sizeMiB: 100, rounds: 5 },
	queue: { executions: 50, itemsPerExecution: 20, taskSeconds: 60, rateLimit: 20, workers: 2, concurrency: 5 },
	queuePace: { executions: 10, itemsPerExecution: 40, taskSeconds: 30, spreadSeconds: 2, rateLimit: 10, concurrency: 5 },
};

export const QUICK: ScaleConfig = {
	quick: true,
	large: { items: 60, taskSeconds: 10, spreadSeconds: 1, rateLimit: 10 },
	tight: { items: 12, taskSeconds: 5, spreadSeconds: 1, rateLimit: 2 },
	durable: { items: 60, taskSeconds: 10, spreadSeconds: 1, rateLimit: 10, waitSeconds: 70 },
	memory: { downloads: 10, sizeMiB: 4, bytesPerSecond: 2 * 1024 * 1024 },
	httpLoop: { items: 12, taskSeconds: 5, spreadSeconds: 1, rateLimit: 2, waitSeconds: 10 },
	download: { sizeMiB: 20, rounds: 2 },
	queue: { executions: 6, itemsPerExecution: 5, taskSeconds: 20, rateLimit: 10, workers: 2, concurrency: 5 },
	queuePace: { executions: 4, itemsPerExecution: 10, taskSeconds: 10, spreadSeconds: 1, rateLimit: 5, concurrency: 5 },
};

/** SCALE_QUEUE_EXECUTIONS=N: case 2 with N executions instead of 50 (its rows' labels say how many). */
export function scaleConfig(env: NodeJS.ProcessEnv = process.env): ScaleConfig {
	const base = env.SCALE_QUICK === '1' ? QUICK : FULL;
	const executions = Number(env.SCALE_QUEUE_EXECUTIONS);
	if (env.SCALE_QUEUE_EXECUTIONS === undefined) return base;
	if (!Number.isInteger(executions) || executions < 1) throw new Error(`SCALE_QUEUE_EXECUTIONS: a whole number ≥ 1, not ${env.SCALE_QUEUE_EXECUTIONS}`);
	return { ...base, queue: { ...base.queue, executions } };
}

/** Floor = max(4N/R, T + 3N/R, N/R + T): each task needs a submit, a status, the artifact list and the content. */
export function floorSeconds({ items: N, taskSeconds: T, rateLimit: R }: BatchCase): number {
	return Math.max((4 * N) / R, T + (3 * N) / R, N / R + T);
}

export const MiB = 1024 * 1024;
