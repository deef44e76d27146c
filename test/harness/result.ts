import type { BinaryDataService } from 'n8n-core';
import type { IBinaryData, INodeExecutionData, IRun, ITaskData } from 'n8n-workflow';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** What a run gives back (see engine.ts for the field meanings). */
export interface RunResult {
	run: IRun;
	output(nodeName?: string): INodeExecutionData[];
	outputs(nodeName?: string): INodeExecutionData[][];
	error?: Error;
	nodeError(nodeName?: string): Error | undefined;
	readBinary(item: INodeExecutionData, property?: string): Promise<Buffer>;
	binaryStream(item: INodeExecutionData, property?: string): Promise<Readable>;
	tries(nodeName?: string): number;
	logs: string[];
	cleanup(): Promise<void>;
}

/**
 * The engine stores errors as plain copies (`{ ...error, message, stack }`); give them back as Error
 * instances so tests can use `toThrow`-style checks, keeping every copied field (description, httpCode, …).
 */
function asError(stored: unknown): Error | undefined {
	if (stored === undefined || stored === null) return undefined;
	if (stored instanceof Error) return stored;
	const error = Object.assign(Object.create(Error.prototype) as Error, stored as object);
	const { name } = stored as { name?: unknown };
	if (typeof name !== 'string') {
		const constructorName = (stored as { constructor?: { name?: string } }).constructor?.name;
		error.name = constructorName && constructorName !== 'Object' ? constructorName : 'Error';
	}
	return error;
}

function binaryOf(item: INodeExecutionData, property: string): IBinaryData {
	const binary = item.binary?.[property];
	if (!binary) {
		const present = Object.keys(item.binary ?? {}).join(', ') || 'none';
		throw new Error(`test harness: item has no binary property "${property}" (present: ${present})`);
	}
	return binary;
}

export function buildResult(args: {
	run: IRun;
	lastNodeName: string;
	binaryData: BinaryDataService;
	binaryFolder?: string;
	tries: Map<string, number>;
	logs: string[];
}): RunResult {
	const { run, lastNodeName, binaryData, binaryFolder, tries, logs } = args;
	const lastTask = (nodeName = lastNodeName): ITaskData | undefined => {
		const tasks = run.data.resultData.runData[nodeName];
		return tasks?.[tasks.length - 1];
	};

	return {
		run,
		logs,
		error: asError(run.data.resultData.error),
		outputs: (nodeName) => (lastTask(nodeName)?.data?.main ?? []).map((items) => items ?? []),
		output: (nodeName) => lastTask(nodeName)?.data?.main?.[0] ?? [],
		nodeError: (nodeName) => asError(lastTask(nodeName)?.error),
		tries: (nodeName = lastNodeName) => tries.get(nodeName) ?? 0,
		readBinary: async (item, property = 'data') => await binaryData.getAsBuffer(binaryOf(item, property)),
		binaryStream: async (item, property = 'data') => {
			const binary = binaryOf(item, property);
			if (binary.id) return await binaryData.getAsStream(binary.id);
			return Readable.from([await binaryData.getAsBuffer(binary)]);
		},
		cleanup: async () => {
			if (binaryFolder) await rm(binaryFolder, { recursive: true, force: true });
		},
	};
}
