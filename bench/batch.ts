// Benchmarks 2 and 3: a batch of tasks of T seconds in one execution (default concurrency, maxConcurrency 1, and one
// item at a time), the status requests each task cost, and the delay from SUCCESS to the stored binary.
import { nodeItems, type N8nHome } from '../test/e2e/n8n';
import type { MockClient } from '../test/mock/process';
import type { LogEntry } from '../test/mock/types';
import type { BenchConfig } from './config';
import { binaryFile, dropBinaryData, expectSucceeded, nodeRuns } from './n8nRun';
import { makeFigure, type Figure } from './figures';
import type { BenchHome } from './setup';
import { median } from './stats';
import { generateNode, linearWorkflow, loopWorkflow, rowsNodes } from './workflows';

export interface TaskTiming {
	taskId: string;
	/** GET /v1/tasks/<id> requests the mock received for the task. */
	statusRequests: number;
	/** From SUCCESS at the mock (submission + queuedMs + runMs) to the binary file's last write. */
	successToReadyMs: number;
	/** From the content request's arrival at the mock to the binary file's last write. */
	transferMs: number;
	/** From SUCCESS to the content request's arrival: what the node adds before the transfer starts. */
	beyondTransferMs: number;
}

interface BatchRun {
	round: number;
	nodeSeconds: number;
	tasks: TaskTiming[];
}

const pathOf = (entry: LogEntry) => entry.path.split('?')[0];

/** Reads, per task of a finished run, what the mock saw and when filesystem mode wrote the binary. */
async function taskTimings(home: N8nHome, mock: MockClient, run: unknown, nodeName: string, expected: number): Promise<TaskTiming[]> {
	const items = nodeItems(run, nodeName);
	if (items.length !== expected) throw new Error(`bench: batch gave ${items.length} items, expected ${expected}`);
	const log = await mock.log();
	const timings: TaskTiming[] = [];
	for (const item of items) {
		const taskId = item.json.task_id as string;
		if (item.json.status !== 'SUCCESS' || !item.binary?.data) throw new Error(`bench: task ${taskId} did not deliver a video`);
		const task = await mock.task(taskId);
		const script = task.script as { queuedMs: number; runMs: number };
		const successAt = Date.parse(task.createdAt as string) + script.queuedMs + script.runMs;
		const content = log.find((entry) => entry.method === 'GET' && pathOf(entry) === `/v1/tasks/${taskId}/artifacts/video/content`);
		if (!content) throw new Error(`bench: no content request for ${taskId}`);
		const ready = binaryFile(home, item.binary.data).mtimeMs;
		const contentAt = Date.parse(content.time);
		timings.push({
			taskId,
			statusRequests: log.filter((entry) => entry.method === 'GET' && pathOf(entry) === `/v1/tasks/${taskId}`).length,
			successToReadyMs: ready - successAt,
			transferMs: ready - contentAt,
			beyondTransferMs: contentAt - successAt,
		});
	}
	return timings;
}

export async function benchBatch(
	config: BenchConfig,
	mock: MockClient,
	{ home, credential }: BenchHome,
	log: (line: string) => void,
): Promise<{ figures: Figure[]; details: unknown }> {
	const { items, taskSeconds: T, pollSeconds: poll, rounds, serialItems } = config.batch;
	const prompts = (count: number, label: string) =>
		Array.from({ length: count }, (_, index) => `${label} ${index + 1} [[queuedMs=0]] [[runMs=${T * 1000}]]`);
	const generate = (maxConcurrency?: number) =>
		generateNode('Generate', credential, { prompt: '={{ $json.prompt }}', maxConcurrency });
	const [parallelId, oneRequestId, serialId] = await home.importWorkflows([
		linearWorkflow('Bench batch: default concurrency', [...rowsNodes(prompts(items, 'Batch item')), generate()]),
		linearWorkflow('Bench batch: maxConcurrency 1', [...rowsNodes(prompts(items, 'One request at a time')), generate(1)]),
		loopWorkflow('Bench batch: one item at a time', rowsNodes(prompts(serialItems, 'Serial item')), generate()),
	]);

	const runs: BatchRun[] = [];
	for (let round = 0; round < rounds; round++) {
		await mock.reset();
		const result = await home.execute(parallelId, 600_000);
		expectSucceeded(result, 'batch');
		const nodeSeconds = nodeRuns(result.json, 'Generate')[0].ms / 1000;
		const tasks = await taskTimings(home, mock, result.json, 'Generate', items);
		dropBinaryData(home);
		runs.push({ round, nodeSeconds, tasks });
		log(
			`  batch ${items} × ${T} s, default concurrency, round ${round + 1}/${rounds}: ${nodeSeconds.toFixed(1)} s; ` +
				`status requests per task ≤ ${Math.max(...tasks.map((task) => task.statusRequests))}`,
		);
	}

	await mock.reset();
	const oneRequest = await home.execute(oneRequestId, 600_000);
	expectSucceeded(oneRequest, 'batch maxConcurrency 1');
	const oneRequestSeconds = nodeRuns(oneRequest.json, 'Generate')[0].ms / 1000;
	dropBinaryData(home);
	log(`  batch ${items} × ${T} s, maxConcurrency 1: ${oneRequestSeconds.toFixed(1)} s`);

	await mock.reset();
	const serial = await home.execute(serialId, 600_000);
	expectSucceeded(serial, 'batch one at a time');
	const serialRuns = nodeRuns(serial.json, 'Generate');
	if (serialRuns.length !== serialItems) throw new Error(`bench: the loop ran Generate ${serialRuns.length} times`);
	const serialWallSeconds = (serialRuns[serialRuns.length - 1].end - serialRuns[0].start) / 1000;
	const serialPerItemSeconds = serialWallSeconds / serialItems;
	const serialEstimateSeconds = serialPerItemSeconds * items;
	dropBinaryData(home);
	log(
		`  batch one item at a time (${serialItems} items): ${serialWallSeconds.toFixed(1)} s, ` +
			`${serialPerItemSeconds.toFixed(1)} s per item → ${serialEstimateSeconds.toFixed(0)} s for ${items}`,
	);

	const allTasks = runs.flatMap((run) => run.tasks);
	const figures: Figure[] = [
		makeFigure({
			id: 'batch.parallelSeconds',
			bench: 2,
			label: `Batch of ${items} tasks × T = ${T} s, default concurrency (5): wall time`,
			unit: 's',
			aggregate: 'median',
			samples: runs.map((run) => run.nodeSeconds),
			target: { op: '<=', value: T + 2 * poll },
			how: `The Generate node's execution time (n8n run data: submit, wait, download all ${items}) in one \`n8n execute\`; median of ${rounds} runs.`,
		}),
		makeFigure({
			id: 'batch.serialSeconds',
			bench: 2,
			label: `The same batch one item at a time (Loop Over Items, batch size 1)`,
			unit: 's',
			aggregate: 'median',
			samples: [serialEstimateSeconds],
			how: `Wall time of ${serialItems} items through the node inside Loop Over Items (batch size 1), per item × ${items}: what a node that awaits each task in turn takes.`,
		}),
		makeFigure({
			id: 'batch.speedup',
			bench: 2,
			label: `Speed-up of the default concurrency over one item at a time`,
			unit: 'x',
			aggregate: 'median',
			digits: 2,
			samples: runs.map((run) => serialEstimateSeconds / run.nodeSeconds),
			target: { op: '>=', value: 10 },
			how: `Serial estimate divided by each default-concurrency run of the same bench run; median.`,
		}),
		makeFigure({
			id: 'batch.oneRequestSeconds',
			bench: 2,
			label: `The same batch with maxConcurrency 1 (one request at a time, waits still overlap)`,
			unit: 's',
			aggregate: 'median',
			samples: [oneRequestSeconds],
			how: `The Generate node's execution time with Max Concurrency 1; one run.`,
		}),
		makeFigure({
			id: 'polling.statusRequestsPerTask',
			bench: 3,
			label: `Status requests per task (T = ${T} s, poll interval ${poll} s), worst task`,
			unit: 'requests',
			aggregate: 'max',
			digits: 0,
			samples: allTasks.map((task) => task.statusRequests),
			target: { op: '<=', value: T / poll + 3 },
			how: `GET /v1/tasks/<id> requests per task in the mock's log, over all ${allTasks.length} tasks of the default-concurrency runs; the highest.`,
		}),
		makeFigure({
			id: 'latency.successToReady',
			bench: 3,
			label: `SUCCESS at the mock → binary stored, median task`,
			unit: 'ms',
			aggregate: 'median',
			digits: 0,
			samples: allTasks.map((task) => task.successToReadyMs),
			how: `From the task's SUCCESS time (mock task record) to the last write of its binary file (filesystem mode mtime), over all tasks.`,
		}),
		makeFigure({
			id: 'latency.afterSuccessBeyondTransfer',
			bench: 3,
			label: `SUCCESS → binary stored, minus the transfer, worst task`,
			unit: 'ms',
			aggregate: 'max',
			digits: 0,
			samples: allTasks.map((task) => task.beyondTransferMs),
			target: { op: '<=', value: poll * 1000 },
			how: `From SUCCESS to the content request's arrival at the mock (the rest, request arrival → file written, is the transfer); the highest over all tasks.`,
		}),
	];
	return {
		figures,
		details: {
			items,
			taskSeconds: T,
			pollSeconds: poll,
			rounds: runs.map((run) => ({
				round: run.round,
				nodeSeconds: run.nodeSeconds,
				medianTransferMs: median(run.tasks.map((task) => task.transferMs)),
				tasks: run.tasks,
			})),
			oneRequestSeconds,
			serial: { items: serialItems, wallSeconds: serialWallSeconds, perItemSeconds: serialPerItemSeconds, estimateSeconds: serialEstimateSeconds },
		},
	};
}
