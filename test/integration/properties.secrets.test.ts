// Time: about 3 s (60 cases, each a run of tens of milliseconds; a 503 retried after 0.25–0.5 s).
/**
 * Issue 37, invariant 3, as a property: the credential's key appears nowhere a run leaves, whatever a hostile server
 * echoes. Generated: the key (letters and digits, with characters that percent-encoding changes, pasted with trailing
 * whitespace or not), how the server writes it (as received, upper-case, percent-encoded in upper or lower hex), where
 * it puts it (a response header: Content-Type, a redirect's Location; a JSON or text body, an error message, a
 * fail_reason, a status, a 503 retried with a warning in the log; an SSE answer with the key split across two or
 * three deltas at generated points, ending whole, broken or with an error event), in which node and operation, with
 * Continue On Fail and Retry On Fail or not.
 * Scanned case-insensitively for the key as stored, trimmed and percent-encoded: every output item, the run's data,
 * the node's error (message, description, context, stack), every log line n8n wrote, stored binaries' metadata.
 */
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import { generateParams } from '../support/faultTable';
import {
	chatParams,
	checkProperty,
	completion,
	imageParams,
	keyLeaks,
	keyVariants,
	mp4File,
	nodeRun,
	pngFile,
	responseObject,
	responsesParams,
	RETRY_ON_FAIL,
	sendError,
	sseDelta,
	sseEnd,
	sseFrame,
	sseHead,
} from '../support/hostileServers';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest } from '../support/scriptedServer';

const PNG = pngFile(200, 3);
const MP4 = mp4File(600, 5);

interface Case {
	key: { body: string; special: string; pasted: string };
	/** How the server writes the key it received. */
	echo: 'asReceived' | 'upper' | 'percent' | 'percentLower';
	place: Place;
	/** Where an SSE answer splits the key (per mille of the key). */
	splits: number[];
	continueOnFail: boolean;
	/** n8n's Retry On Fail: a retry quotes the first try's error. */
	retryOnFail: boolean;
}

const keyOf = (c: Case) => `sk-${c.key.body}${c.key.special}${c.key.body.slice(0, 4)}${c.key.pasted}`;

/** The key as the server writes it, from what it received (servers trim the header). */
function echoed(c: Case, req: ScriptedRequest): string {
	const received = String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
	switch (c.echo) {
		case 'asReceived':
			return received;
		case 'upper':
			return received.toUpperCase();
		case 'percent':
			return encodeURIComponent(received);
		case 'percentLower':
			return encodeURIComponent(received).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
	}
}

/** `text` in pieces, cut inside the key at the case's points. */
function pieces(c: Case, before: string, key: string, after: string): string[] {
	const cuts = [
		...new Set(
			c.splits.map((p) => before.length + Math.max(1, Math.min(key.length - 1, Math.floor((key.length * p) / 1000)))),
		),
	];
	const text = `${before}${key}${after}`;
	const bounds = [0, ...cuts.sort((a, b) => a - b), text.length];
	return bounds.slice(1).map((end, i) => text.slice(bounds[i], end));
}

/** `index`: the request's place among all the server got (0 for the first). */
type Answer = (c: Case, key: string, req: ScriptedRequest, res: ServerResponse, base: string, index: number) => void;
interface PlaceSpec {
	node: { type: string; parameters: IDataObject };
	answer: Answer;
}

const chatNode = (streaming: 'always' | 'never') => ({
	type: 'genGatewayChat',
	parameters: chatParams('hi', streaming),
});
const responsesNode = { type: 'genGatewayChat', parameters: responsesParams('hi', 'always') };
const imageNode = (responseFormat = 'url') => ({
	type: 'genGatewayImage',
	parameters: imageParams('a fox', { responseFormat }),
});
const downloadNode = { type: 'genGatewayVideo', parameters: { operation: 'download', taskId: 'task_1' } };
const isPost = (req: ScriptedRequest) => req.method === 'POST';
const imageUrl = (res: ServerResponse, base: string) =>
	sendJson(res, 200, { created: 1, data: [{ url: `${base}/files/a.png` }] });
const artifacts = (res: ServerResponse) => sendJson(res, 200, [{ key: 'video', type: 'video' }]);

/** A streamed answer with the key in its deltas: whole, cut off after them, or ended by an error event. */
const streamedKey =
	(operation: 'chat' | 'responses', ending: 'whole' | 'broken' | 'errorEvent'): Answer =>
	(c, key, _req, res) => {
		sseHead(res);
		const deltas = pieces(c, 'Your key is ', key, ', keep it safe.')
			.map((piece) => sseDelta(operation, piece))
			.join('');
		if (ending === 'broken') return void res.write(deltas, () => res.socket?.destroy());
		const end =
			ending === 'whole'
				? sseEnd(operation, `Your key is ${key}, keep it safe.`)
				: sseFrame({ message: `bad key ${key}` }, 'error');
		res.end(`${deltas}${end}`);
	};

const PLACES = {
	chatContent: {
		node: chatNode('never'),
		answer: (_c, key, _req, res) => sendJson(res, 200, completion(`Your key: ${key}.`)),
	},
	chatStreamed: { node: chatNode('always'), answer: streamedKey('chat', 'whole') },
	chatStreamBroken: { node: chatNode('always'), answer: streamedKey('chat', 'broken') },
	chatStreamErrorEvent: { node: chatNode('always'), answer: streamedKey('chat', 'errorEvent') },
	responsesStreamed: { node: responsesNode, answer: streamedKey('responses', 'whole') },
	responsesStreamBroken: { node: responsesNode, answer: streamedKey('responses', 'broken') },
	responsesJson: {
		node: { type: 'genGatewayChat', parameters: responsesParams('hi', 'never') },
		answer: (_c, key, _req, res) => sendJson(res, 200, responseObject(`key ${key}`)),
	},
	chatRefusedThenAccepted: {
		// A 503 is retried inside the node, with a warning in n8n's log.
		node: chatNode('never'),
		answer: (_c, key, _req, res, _base, index) =>
			index === 0 ? sendError(res, 503, `overloaded for ${key}`) : sendJson(res, 200, completion('fine')),
	},
	chatErrorJson: {
		node: chatNode('never'),
		answer: (_c, key, _req, res) => sendError(res, 400, `invalid api key ${key}`),
	},
	chatErrorText: {
		node: chatNode('never'),
		answer: (_c, key, _req, res) =>
			res.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream said: bad key ${key}`),
	},
	chatErrorContentType: {
		node: chatNode('never'),
		answer: (_c, key, _req, res) => res.writeHead(400, { 'content-type': `application/x-${key}` }).end('refused'),
	},
	chatRedirect: {
		node: chatNode('never'),
		answer: (_c, key, _req, res) => res.writeHead(307, { location: `/v1/${key}/chat/completions?key=${key}` }).end(),
	},
	imageRevisedPrompt: {
		node: imageNode('b64_json'),
		answer: (_c, key, _req, res) =>
			sendJson(res, 200, { created: 1, data: [{ b64_json: PNG.toString('base64'), revised_prompt: `a fox, ${key}` }] }),
	},
	imageB64Text: {
		node: imageNode('b64_json'),
		answer: (_c, key, _req, res) =>
			sendJson(res, 200, { created: 1, data: [{ b64_json: Buffer.from(`denied: ${key}`).toString('base64') }] }),
	},
	imageUrlText: {
		node: imageNode(),
		answer: (_c, key, req, res, base) =>
			isPost(req)
				? imageUrl(res, base)
				: res.writeHead(200, { 'content-type': 'text/plain' }).end(`no image for ${key}`),
	},
	imageUrlContentType: {
		node: imageNode(),
		answer: (_c, key, req, res, base) => {
			if (isPost(req)) return imageUrl(res, base);
			res.writeHead(200, { 'content-type': `image/x-${key}`, 'content-length': PNG.length }).end(PNG);
		},
	},
	imageUrlRedirect: {
		node: imageNode(),
		answer: (_c, key, req, res, base) => {
			if (isPost(req)) return imageUrl(res, base);
			if (req.path === '/files/a.png') return void res.writeHead(302, { location: `/files/${key}/a.png` }).end();
			sendError(res, 404, `no file for ${key}`);
		},
	},
	videoFailReason: {
		node: { type: 'genGatewayVideo', parameters: generateParams('a fox', { downloadVideo: false }) },
		answer: (_c, key, req, res) =>
			isPost(req)
				? sendJson(res, 200, { task_id: 'task_1' })
				: sendJson(res, 200, { status: 'FAILURE', fail_reason: `invalid key ${key}` }),
	},
	videoStatus: {
		node: { type: 'genGatewayVideo', parameters: { operation: 'getStatus', taskId: 'task_1' } },
		answer: (_c, key, _req, res) =>
			sendJson(res, 200, { task_id: `task_${key}`, status: `RUNNING ${key}`, progress: `${key}%` }),
	},
	videoContentType: {
		node: downloadNode,
		answer: (_c, key, req, res) => {
			if (req.path.endsWith('/artifacts')) return artifacts(res);
			res.writeHead(200, { 'content-type': `video/${key}`, 'content-length': MP4.length }).end(MP4);
		},
	},
	videoContentText: {
		node: downloadNode,
		answer: (_c, key, req, res) =>
			req.path.endsWith('/artifacts')
				? artifacts(res)
				: res.writeHead(200, { 'content-type': `text/x-${key}` }).end(`expired link for ${key}`),
	},
	videoContentRetried: {
		node: downloadNode,
		answer: (_c, key, req, res, _base, index) => {
			if (req.path.endsWith('/artifacts')) return artifacts(res);
			if (index === 1) return sendError(res, 503, `busy: ${key}`);
			sendError(res, 404, `no video for ${key}`);
		},
	},
	videoRedirect: {
		node: downloadNode,
		answer: (_c, key, req, res) => {
			if (req.path.endsWith('/artifacts')) return artifacts(res);
			if (req.path.endsWith('/content')) return void res.writeHead(302, { location: `/files/${key}/video.mp4` }).end();
			sendError(res, 404, `gone: ${key}`);
		},
	},
	modelsError: {
		node: { type: 'genGatewayModels', parameters: { operation: 'getMany', returnAll: true } },
		answer: (_c, key, _req, res) => sendError(res, 400, `rejected key ${key}`),
	},
	modelsList: {
		node: { type: 'genGatewayModels', parameters: { operation: 'getMany', returnAll: true } },
		answer: (_c, key, _req, res) =>
			sendJson(res, 200, { object: 'list', data: [{ id: `m-${key}`, object: 'model', owned_by: key }] }),
	},
} satisfies Record<string, PlaceSpec>;
type Place = keyof typeof PLACES;

const cases: fc.Arbitrary<Case> = fc.record({
	key: fc.record({
		body: fc.stringMatching(/^[A-Za-z0-9]{16,24}$/),
		special: fc.constantFrom('', '/', '+', '=', '/+='),
		pasted: fc.constantFrom('', ' ', '\t', ' \t '),
	}),
	echo: fc.constantFrom('asReceived' as const, 'upper' as const, 'percent' as const, 'percentLower' as const),
	place: fc.constantFrom(...(Object.keys(PLACES) as Place[])),
	splits: fc.array(fc.integer({ min: 1, max: 999 }), { minLength: 1, maxLength: 2 }),
	continueOnFail: fc.boolean(),
	retryOnFail: fc.boolean(),
});

jest.setTimeout(180_000);

it('no variant of the key appears in any output, error or log line, whatever the server echoes', async () => {
	await checkProperty(
		cases,
		async (c) => {
			const spec: PlaceSpec = PLACES[c.place];
			const key = keyOf(c);
			const server = await startScriptedServer((req, res, index) =>
				spec.answer(c, echoed(c, req), req, res, server.url, index),
			);
			try {
				const result = await runWorkflow(
					nodeRun(
						server.url,
						key,
						{
							...spec.node,
							continueOnFail: c.continueOnFail,
							...(c.retryOnFail ? { ...RETRY_ON_FAIL, maxTries: 2 } : {}),
						},
						{ binaryMode: 'filesystem' },
					),
				);
				try {
					// The server was asked, with the key as servers see it.
					expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key.trim()}`);
					const leaks = await keyLeaks(result, keyVariants(key));
					if (leaks.length > 0) throw new Error(`The key ${JSON.stringify(key)} leaked into:\n${leaks.join('\n')}`);
				} finally {
					await result.cleanup();
				}
			} finally {
				await server.close();
			}
		},
		{ numRuns: 60 },
	);
});
