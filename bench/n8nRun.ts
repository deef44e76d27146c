// One `n8n execute` of a workflow while the n8n process tree's memory is sampled, and what the run printed.
/* eslint-disable @typescript-eslint/no-explicit-any */
import * as fs from 'fs';
import * as path from 'path';

import { nodeItems, parseRun, runError, type ExecuteResult, type N8nHome } from '../test/e2e/n8n';
import { sampleTree, type TreeTrace } from './procTree';

export interface NodeRun {
	/** Epoch ms when n8n started the node. */
	start: number;
	/** Epoch ms when it finished. */
	end: number;
	ms: number;
}

export interface SampledRun {
	result: ExecuteResult;
	trace: TreeTrace;
}

/**
 * Runs a saved workflow with `n8n execute` (as N8nHome.execute does, with `env` added), sampling the RSS of n8n and
 * its task runner every 50 ms.
 */
export async function executeSampled(
	home: N8nHome,
	workflowId: string,
	env: Record<string, string> = {},
	timeoutMs = 600_000,
): Promise<SampledRun> {
	const sampler = sampleTree((info) => info.cmdline.includes(`--id=${workflowId}`));
	try {
		const output = await home.cli(['execute', `--id=${workflowId}`, '--rawOutput'], timeoutMs, env);
		return { result: { ...output, json: parseRun(output.stdout) }, trace: sampler.stop() };
	} finally {
		sampler.stop();
	}
}

/** Throws with what n8n printed unless the run finished cleanly. */
export function expectSucceeded(run: ExecuteResult, what: string): void {
	if (run.exitCode === 0 && run.json && !runError(run.json)) return;
	throw new Error(
		`${what}: the n8n run failed (exit ${run.exitCode}, ${run.signal ?? 'no signal'})\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-1500)}`,
	);
}

/** Every run of a node in the execution (a node in a loop runs several times), from n8n's run data. */
export function nodeRuns(run: any, nodeName: string): NodeRun[] {
	const runs: any[] = run?.data?.resultData?.runData?.[nodeName] ?? [];
	return runs.map((entry) => ({
		start: entry.startTime,
		end: entry.startTime + entry.executionTime,
		ms: entry.executionTime,
	}));
}

/** The output items of every run of a node, in order. */
export function allNodeItems(run: any, nodeName: string): any[] {
	const count = (run?.data?.resultData?.runData?.[nodeName] ?? []).length;
	return Array.from({ length: count }, (_, index) => nodeItems(run, nodeName, 0, index)).flat();
}

/** The file filesystem mode stored a binary in, and when it was last written (the binary is ready then). */
export function binaryFile(home: N8nHome, binary: { id?: string }): { path: string; mtimeMs: number; size: number } {
	if (!binary?.id) throw new Error(`not a filesystem binary: ${JSON.stringify(binary)}`);
	const file = home.binaryPath(binary.id);
	const stat = fs.statSync(file);
	return { path: file, mtimeMs: stat.mtimeMs, size: stat.size };
}

/** Removes the binary data of finished executions (a 512 MB file per run adds up). */
export function dropBinaryData(home: N8nHome): void {
	for (const base of ['binaryData', 'storage']) {
		fs.rmSync(path.join(home.n8nFolder, base), { recursive: true, force: true });
	}
}
