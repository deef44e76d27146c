/**
 * Shared pieces of the property tests (test/integration/properties.*.test.ts, issue 37 "The rules as properties"):
 * running a fast-check property so that a failure prints its seed and counterexample, the answers a hostile loopback
 * server sends byte for byte, the files it serves, and where a run could leak the key.
 */
import { Container } from '@n8n/di';
import fc from 'fast-check';
import { BinaryDataService } from 'n8n-core';
import type { IDataObject } from 'n8n-workflow';
import type { ServerResponse } from 'node:http';

import type { HarnessNode, RunOptions, RunResult } from '../harness/engine';
import { createRandom } from './fuzzRandom';
import { sendJson } from './scriptedServer';

/** FC_<name> as a number, when it is one. */
const envNumber = (name: string): number | undefined => {
	const value = Number(process.env[name]);
	return process.env[name] && Number.isInteger(value) ? value : undefined;
};

/**
 * Checks a property over `numRuns` generated cases (FC_RUNS overrides). A failure names the seed, the path and the
 * shrunk counterexample; FC_SEED=<seed> FC_PATH=<path> runs exactly that case again. Shrinking runs real workflows,
 * so the whole check stops after `maxMs`; a failure found is reported all the same, shrunk as far as it got.
 */
export async function checkProperty<T>(
	arbitrary: fc.Arbitrary<T>,
	predicate: (value: T) => Promise<void>,
	{ numRuns, maxMs = 150_000 }: { numRuns: number; maxMs?: number },
): Promise<void> {
	const seed = envNumber('FC_SEED');
	await fc.assert(fc.asyncProperty(arbitrary, predicate), {
		numRuns: envNumber('FC_RUNS') ?? numRuns,
		...(seed === undefined ? {} : { seed }),
		...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
		// Every failing attempt is listed, not only the shrunk one.
		verbose: fc.VerbosityLevel.Verbose,
		interruptAfterTimeLimit: maxMs,
	});
}

let credentials = 0;
/**
 * A credential of its own for each run: the pace a 429 teaches holds for the whole credential in the process
 * (shared/transport/pacer.ts), and must not slow the runs that follow.
 */
const ownCredential = () => ({ id: `property-${++credentials}`, name: `Property ${credentials}` });

/** One node named "Node" against `baseUrl`, as runWorkflow or runWorkflowsTogether takes it. */
export function nodeRun(
	baseUrl: string,
	apiKey: string,
	node: Omit<HarnessNode, 'name' | 'credentials'>,
	extra: Omit<RunOptions, 'nodes' | 'credentials'> = {},
): RunOptions {
	return {
		nodes: [{ name: 'Node', credentials: ownCredential(), ...node }],
		credentials: { baseUrl, apiKey },
		...extra,
	};
}

export const RETRY_ON_FAIL = { retryOnFail: true, waitBetweenTries: 1 };

// ---- Node parameters -------------------------------------------------------------------------------------------

const model = (value: string) => ({ __rl: true, mode: 'id', value });
export type Streaming = 'always' | 'never';

export const chatParams = (content: string, streaming: Streaming, options: IDataObject = {}, system?: string) => ({
	operation: 'message',
	model: model('m'),
	messages: { values: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content }] },
	options: { streaming, ...options },
});

export const responsesParams = (content: string, streaming: Streaming, options: IDataObject = {}) => ({
	operation: 'response',
	model: model('m'),
	input: { values: [{ role: 'user', content }] },
	options: { streaming, ...options },
});

export const imageParams = (prompt: string, options: IDataObject = {}) => ({
	operation: 'generate',
	model: model('img-1'),
	prompt,
	size: '256x256',
	options,
});

// ---- Answers -----------------------------------------------------------------------------------------------------

export const completion = (content: string) => ({
	id: 'chatcmpl-1',
	object: 'chat.completion',
	created: 1,
	model: 'm',
	choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});

export const responseObject = (text: string) => ({
	id: 'resp_1',
	object: 'response',
	status: 'completed',
	model: 'm',
	output: [
		{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text }] },
	],
	output_text: text,
});

export const sseFrame = (value: unknown, event?: string) =>
	`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(value)}\n\n`;

/** One piece of a streamed answer, in the framing of the operation (chat completions or responses). */
export const sseDelta = (operation: 'chat' | 'responses', content: string) =>
	operation === 'chat'
		? sseFrame({
				id: 'c1',
				object: 'chat.completion.chunk',
				model: 'm',
				choices: [{ index: 0, delta: { content }, finish_reason: null }],
			})
		: sseFrame({ type: 'response.output_text.delta', delta: content }, 'response.output_text.delta');

/** The end of a whole streamed answer. */
export const sseEnd = (operation: 'chat' | 'responses', text: string) =>
	operation === 'chat'
		? 'data: [DONE]\n\n'
		: sseFrame({ type: 'response.completed', response: responseObject(text) }, 'response.completed');

export const sseHead = (res: ServerResponse) =>
	res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });

/** A service error in the OpenAI shape. */
export const sendError = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) =>
	sendJson(res, status, { error: { message, type: 'server_error' } }, headers);

/**
 * An answer written straight to the socket: any status line and headers (a length that lies, none at all), then the
 * socket ended (`close`: a close-delimited body ends here) or destroyed (`reset`).
 */
export function rawAnswer(
	res: ServerResponse,
	status: string,
	headers: string[],
	body: Buffer,
	end: 'close' | 'reset',
): void {
	const socket = res.socket;
	if (!socket) return;
	const head = Buffer.from([`HTTP/1.1 ${status}`, ...headers, 'Connection: close', '', ''].join('\r\n'), 'latin1');
	socket.write(Buffer.concat([head, body]), () => (end === 'close' ? socket.end() : socket.destroy()));
}

/** One chunk of a chunked body. */
export const chunk = (bytes: Buffer) =>
	Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
export const LAST_CHUNK = Buffer.from('0\r\n\r\n');

// ---- Files -------------------------------------------------------------------------------------------------------

/** Seeded bytes, so that a counterexample's files are the same when it is run again. */
function seededBytes(length: number, seed: number): Buffer {
	const random = createRandom(seed);
	const bytes = Buffer.alloc(length);
	for (let i = 0; i < length; i++) bytes[i] = Math.floor(random.next() * 256);
	return bytes;
}

export const box = (type: string, body: Buffer) => {
	const header = Buffer.alloc(8);
	header.writeUInt32BE(8 + body.length, 0);
	header.write(type, 4, 'latin1');
	return Buffer.concat([header, body]);
};
export const FTYP = box('ftyp', Buffer.from('isom\x00\x00\x02\x00isomiso2avc1mp41', 'latin1'));

/**
 * How an mp4's top-level boxes go: moov before mdat (fast start), moov after mdat, a `free` box after both (ends that
 * are box boundaries before the file's end), or damaged: no moov, no mdat.
 */
export type Mp4Shape = 'moovFirst' | 'moovLast' | 'trailingBox' | 'noMoov' | 'noMdat';
/** An mp4 of `size` bytes (at least 300) of the given shape. */
export function mp4File(size: number, seed: number, shape: Mp4Shape = 'moovFirst'): Buffer {
	const moov = box(shape === 'noMoov' ? 'free' : 'moov', seededBytes(200, seed));
	const trailer = shape === 'trailingBox' ? box('free', Buffer.alloc(8)) : Buffer.alloc(0);
	const mdat = box(
		shape === 'noMdat' ? 'skip' : 'mdat',
		seededBytes(size - FTYP.length - moov.length - trailer.length - 8, seed + 1),
	);
	return Buffer.concat(shape === 'moovLast' ? [FTYP, mdat, moov] : [FTYP, moov, mdat, trailer]);
}

const PNG_SIGNATURE = Buffer.from('89504e470d0a1a0a', 'hex');
const PNG_IEND = Buffer.from('0000000049454e44ae426082', 'hex');
/** A PNG of `size` bytes: signature, other bytes, IEND (or, `noIend`, other bytes where IEND belongs). */
export function pngFile(size: number, seed: number, noIend = false): Buffer {
	const middle = seededBytes(size - PNG_SIGNATURE.length - PNG_IEND.length, seed);
	return Buffer.concat([PNG_SIGNATURE, middle, noIend ? seededBytes(PNG_IEND.length, seed + 1) : PNG_IEND]);
}

// ---- The key -----------------------------------------------------------------------------------------------------

/** What a key may be found as: as stored, trimmed (servers trim the header), percent-encoded; in any letter case. */
export function keyVariants(key: string): string[] {
	return [...new Set([key, key.trim(), encodeURIComponent(key.trim())])].map((variant) => variant.toLowerCase());
}

/** JSON text of anything, also of cycles and Errors (their message and stack are not enumerable). */
function serialize(thing: unknown): string {
	const seen = new WeakSet<object>();
	return (
		JSON.stringify(thing, (_key, value: unknown) => {
			if (value && typeof value === 'object') {
				if (seen.has(value)) return undefined;
				seen.add(value);
			}
			if (value instanceof Error) return { ...value, name: value.name, message: value.message, stack: value.stack };
			if (Buffer.isBuffer(value)) return value.toString('latin1');
			return value;
		}) ?? ''
	);
}

/**
 * Where a run shows a variant of the key: every output item (of every output), the run's data as n8n saves it, the
 * node's error (message, description, context, stack), each log line, each stored binary's metadata.
 */
export async function keyLeaks(result: RunResult, variants: string[], nodeName = 'Node'): Promise<string[]> {
	const error = result.nodeError(nodeName) as (Error & { description?: unknown; context?: unknown }) | undefined;
	const places: Array<[string, unknown]> = [
		['outputs', result.outputs(nodeName)],
		['run data', result.run],
		[
			'error',
			error && {
				message: error.message,
				description: error.description,
				context: error.context,
				stack: error.stack,
				all: error,
			},
		],
		['run error', result.error],
		...result.logs.map((line, index): [string, unknown] => [`log line ${index}: ${line.slice(0, 300)}`, line]),
	];
	const binaryData = Container.get(BinaryDataService);
	for (const [output, items] of result.outputs(nodeName).entries()) {
		for (const [index, item] of items.entries()) {
			for (const [property, binary] of Object.entries(item.binary ?? {})) {
				if (binary.id)
					places.push([
						`output ${output} item ${index} binary ${property} metadata`,
						await binaryData.getMetadata(binary.id),
					]);
			}
		}
	}
	return places
		.filter(([, thing]) => {
			const text = (typeof thing === 'string' ? thing : serialize(thing)).toLowerCase();
			return variants.some((variant) => text.includes(variant));
		})
		.map(([where]) => where);
}


// ---- Slow servers (issue 51, 6) ---------------------------------------------------------------------------------

/**
 * Drips `filler` every `everyMs` until the connection closes: a space after a JSON answer's `{`, a `: PING` comment in
 * an event stream, the next byte of a file. Every write keeps a socket's idle time-out from running out, so only a
 * bound on the whole ends the wait.
 */
export function drip(res: ServerResponse, filler: () => Buffer | string, everyMs: number): void {
	const timer = setInterval(() => {
		if (res.destroyed || res.socket?.destroyed) return clearInterval(timer);
		res.write(filler());
	}, everyMs);
	res.on('close', () => clearInterval(timer));
}

/** The status line at once, then one more header line every `everyMs`: an answer whose headers never end. */
export function dripHeaders(res: ServerResponse, everyMs: number): void {
	const socket = res.socket;
	if (!socket) return;
	socket.write('HTTP/1.1 200 OK\r\n');
	const timer = setInterval(() => {
		if (socket.destroyed) return clearInterval(timer);
		socket.write('X-Slow: 1\r\n');
	}, everyMs);
	socket.on('close', () => clearInterval(timer));
}
