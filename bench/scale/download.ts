// Case 4: one download's cost on n8n 2.x, against its floors, in one `n8n execute` per round (variants in rotating
// order, each after a 1 s pause, after a warm-up download, so none is the process's cold first):
//   store64k / store1m  n8n storing a generated stream (64 KiB chunks as a socket gives, or 1 MiB) with
//                       prepareBinaryData: no HTTP at all (a tiny custom node, ScaleProbe, below);
//   read                n8n's HTTP helper (this.helpers.httpRequest, encoding 'stream') read to the end, nothing stored;
//   readStore           the helper's stream handed straight to prepareBinaryData (the least a node can do);
//   readGrouped         the same, regrouped into 1 MiB chunks read on while n8n writes (nodes/shared/binary/largeChunks);
//   readBuffer          the helper reading into one Buffer, then prepareBinaryData of it (one write; memory = the file);
//   video               Gen Gateway Video, Generate of an instant task (submit, status, list, download, store);
//   http                n8n's HTTP Request node (response format File) on the content endpoint;
// and curl to a file, before and after each round. Time = the node's execution time in n8n's run data; memory = the
// process tree's RSS peak during the node over its level just before.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { promisify } from 'util';

import type { MockClient } from '../../test/mock/process';
import { binaryFile, dropBinaryData, executeSampled, expectSucceeded, nodeRuns } from '../n8nRun';
import { nodeItems, type N8nHome } from '../../test/e2e/n8n';
import { WORK_DIR, type BenchHome } from '../setup';
import type { NodeSpec } from '../../test/e2e/n8n';
import { generateNode, httpDownloadNode, linearWorkflow, settleNode } from '../workflows';
import { MiB, type ScaleConfig } from './config';
import { median, type Log } from './common';
import { memoryAround } from './inprocess';

const run = promisify(execFile);

/** The probe node, written into the home's custom folder ($N8N_USER_FOLDER/.n8n/custom → type CUSTOM.scaleProbe). */
const PROBE_SOURCE = `'use strict';
const { Readable } = require('stream');
class ScaleProbe {
	constructor() {
		this.description = {
			displayName: 'Scale Probe', name: 'scaleProbe', group: ['transform'], version: 1, description: 'bench only',
			defaults: { name: 'Scale Probe' }, inputs: ['main'], outputs: ['main'],
			properties: [
				{ displayName: 'Mode', name: 'mode', type: 'string', default: 'store1m' },
				{ displayName: 'Bytes', name: 'bytes', type: 'number', default: 0 },
				{ displayName: 'URL', name: 'url', type: 'string', default: '' },
				{ displayName: 'Key', name: 'key', type: 'string', default: '' },
			],
		};
	}
	async execute() {
		const mode = this.getNodeParameter('mode', 0);
		const bytes = this.getNodeParameter('bytes', 0);
		const started = Date.now();
		const generated = (chunkSize) => {
			const chunk = Buffer.alloc(chunkSize, 7);
			let left = bytes;
			return new Readable({ read() { if (left <= 0) { this.push(null); return; } const n = Math.min(chunkSize, left); left -= n; this.push(n === chunkSize ? Buffer.from(chunk) : chunk.subarray(0, n)); } });
		};
		const fetch = async () => await this.helpers.httpRequest({
			url: this.getNodeParameter('url', 0), method: 'GET', encoding: 'stream',
			headers: { Authorization: 'Bearer ' + this.getNodeParameter('key', 0) },
		});
		let binary;
		let read = 0;
		if (mode === 'store64k' || mode === 'store1m') {
			binary = await this.helpers.prepareBinaryData(generated(mode === 'store64k' ? 65536 : 1048576), 'probe.mp4', 'video/mp4');
		} else if (mode === 'read') {
			for await (const chunk of await fetch()) read += chunk.length;
		} else if (mode === 'readBuffer') {
			const body = await this.helpers.httpRequest({
				url: this.getNodeParameter('url', 0), method: 'GET', encoding: 'arraybuffer',
				headers: { Authorization: 'Bearer ' + this.getNodeParameter('key', 0) },
			});
			binary = await this.helpers.prepareBinaryData(Buffer.from(body), 'probe.mp4', 'video/mp4');
		} else if (mode === 'readGrouped') {
			// The helper's stream regrouped into 1 MiB chunks read on while n8n writes (what largeChunks.ts does).
			const source = await fetch();
			let parts = [];
			let length = 0;
			const output = new Readable({ highWaterMark: 1048576, read() { source.resume(); } });
			const flush = () => { if (length === 0) return true; const chunk = parts.length === 1 ? parts[0] : Buffer.concat(parts, length); parts = []; length = 0; return output.push(chunk); };
			source.on('data', (chunk) => { parts.push(chunk); length += chunk.length; if (length >= 1048576 && !flush()) source.pause(); });
			source.once('end', () => { flush(); output.push(null); });
			source.once('error', (error) => output.destroy(error));
			binary = await this.helpers.prepareBinaryData(output, 'probe.mp4', 'video/mp4');
		} else {
			binary = await this.helpers.prepareBinaryData(await fetch(), 'probe.mp4', 'video/mp4');
		}
		const item = { json: { mode, ms: Date.now() - started, read }, pairedItem: { item: 0 } };
		if (binary) item.binary = { data: binary };
		return [[item]];
	}
}
module.exports = { ScaleProbe };
`;

export const VARIANTS = ['store64k', 'store1m', 'read', 'readStore', 'readGrouped', 'readBuffer', 'video', 'http'] as const;
type Variant = (typeof VARIANTS)[number];

export interface DownloadRound {
	round: number;
	ms: Record<Variant, number>;
	addedMiB: Record<Variant, number>;
	curlMs: number;
}

function installProbe(home: N8nHome): void {
	const dir = path.join(home.n8nFolder, 'custom');
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, 'ScaleProbe.node.js'), PROBE_SOURCE);
}

function probe(name: string, mode: string, bytes: number, url = '', key = ''): NodeSpec {
	return { name, type: 'CUSTOM.scaleProbe', typeVersion: 1, parameters: { mode, bytes, url, key } };
}

async function submit(mock: MockClient, prompt: string): Promise<string> {
	const response = await fetch(`${mock.url}/v1/tasks/vendor`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'application/json' },
		body: JSON.stringify({ model: 'gk_1.5', prompt }),
	});
	const body = (await response.json()) as { task_id?: string };
	if (!body.task_id) throw new Error(`bench:scale: the mock did not accept a task (${response.status})`);
	return body.task_id;
}

async function curlMs(mock: MockClient, url: string, size: number): Promise<number> {
	const headers = path.join(WORK_DIR, 'scale-curl-headers');
	const output = path.join(WORK_DIR, 'scale-curl.mp4');
	fs.writeFileSync(headers, `Authorization: Bearer ${mock.apiKey}\n`, { mode: 0o600 });
	try {
		const { stdout } = await run('curl', ['--silent', '--fail', '--header', `@${headers}`, '--output', output, '--write-out', '%{time_total}', url]);
		if (fs.statSync(output).size !== size) throw new Error('bench:scale: curl stored a wrong size');
		return Number(stdout.trim()) * 1000;
	} finally {
		fs.rmSync(headers, { force: true });
		fs.rmSync(output, { force: true });
	}
}

export async function runDownload(config: ScaleConfig, mock: MockClient, { home, credential }: BenchHome, log: Log): Promise<DownloadRound[]> {
	const { sizeMiB, rounds } = config.download;
	const size = sizeMiB * MiB;
	fs.mkdirSync(WORK_DIR, { recursive: true });
	installProbe(home);
	await mock.reset();
	const prompt = (label: string) => `${label} [[instant]] [[size=${sizeMiB}M]] [[ttlMs=3600000]]`;
	const taskId = await submit(mock, prompt('Download probe'));
	const url = `${mock.url}/v1/tasks/${taskId}/artifacts/video/content`;
	const nodesOf: Record<Variant, NodeSpec[]> = {
		store64k: [probe('store64k', 'store64k', size)],
		store1m: [probe('store1m', 'store1m', size)],
		read: [probe('read', 'read', size, url, mock.apiKey)],
		readStore: [probe('readStore', 'readStore', size, url, mock.apiKey)],
		readGrouped: [probe('readGrouped', 'readGrouped', size, url, mock.apiKey)],
		readBuffer: [probe('readBuffer', 'readBuffer', size, url, mock.apiKey)],
		video: [generateNode('video', credential, { prompt: prompt('Download, Video node') })],
		http: [generateNode('task for http', credential, { prompt: prompt('Download, HTTP Request node'), download: false }), httpDownloadNode('http', credential, mock.url)],
	};
	const pause = (index: number): NodeSpec => ({ ...settleNode(1), name: `Pause ${index}` });
	const workflows = Array.from({ length: rounds }, (_, round) => {
		const order = VARIANTS.map((_, index) => VARIANTS[(index + round) % VARIANTS.length]);
		return linearWorkflow(`Scale: one download, round ${round + 1}`, [
			settleNode(4),
			probe('warm-up', 'readStore', size, url, mock.apiKey),
			...order.flatMap((variant, index) => [pause(index), ...nodesOf[variant]]),
		]);
	});
	const ids = await home.importWorkflows(workflows);
	const results: DownloadRound[] = [];
	for (let round = 0; round < rounds; round++) {
		const before = await curlMs(mock, url, size);
		const { result, trace } = await executeSampled(home, ids[round]);
		expectSucceeded(result, 'download');
		const after = await curlMs(mock, url, size);
		const ms = {} as Record<Variant, number>;
		const addedMiB = {} as Record<Variant, number>;
		for (const variant of VARIANTS) {
			const [node] = nodeRuns(result.json, variant);
			ms[variant] = node.ms;
			addedMiB[variant] = memoryAround(trace, node.start, node.end).addedMiB;
			if (variant !== 'read') {
				const stored = binaryFile(home, nodeItems(result.json, variant)[0].binary?.data);
				if (stored.size !== size) throw new Error(`bench:scale: ${variant} stored ${stored.size} bytes, expected ${size}`);
			} else if (nodeItems(result.json, 'read')[0].json.read !== size) {
				throw new Error('bench:scale: the HTTP helper read a wrong size');
			}
		}
		dropBinaryData(home);
		results.push({ round, ms, addedMiB, curlMs: (before + after) / 2 });
		log(
			`  download ${sizeMiB} MiB round ${round + 1}/${rounds}: ` +
				VARIANTS.map((variant) => `${variant} ${ms[variant]} ms +${addedMiB[variant].toFixed(0)} MiB`).join(', ') +
				`; curl ${((before + after) / 2).toFixed(0)} ms`,
		);
	}
	return results;
}

export function medianOf(rounds: DownloadRound[], pick: (round: DownloadRound) => number): number {
	return median(rounds.map(pick));
}
