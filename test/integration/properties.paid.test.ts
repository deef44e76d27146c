// Time: about 8 s (40 cases; a 502/503 is retried inside the node after 0.25–1 s, really waited).
/**
 * Issue 37, invariant 1, as a property: a paid POST (video submit, chat completion, response, image generation) that
 * the service accepted, or whose outcome is unknown, is never sent again for the same item of the same node run, also
 * under n8n's Retry On Fail and when the body holds an expression that changes between tries. Only answers that say
 * "not accepted" (429, 502, 503, another 4xx) may be followed by another POST of the item.
 *
 * Generated: the node and operation (streamed or not), 1–3 items, where an expression that changes between tries sits
 * ($now.toMillis(), $now.toISO(), Math.random(), or none), Retry On Fail's tries, Continue On Fail, and for each item
 * the answers its successive POSTs get (then accepted); for Video and Image also a failure after the acceptance (the
 * task fails, the file is missing), which makes n8n retry the node although the work was paid.
 * Runs on n8n's real engine against a loopback server that counts the POSTs per item (the item index is in the body).
 */
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';

import { runWorkflow } from '../harness/engine';
import { generateParams } from '../support/faultTable';
import {
	checkProperty,
	chatParams,
	completion,
	imageParams,
	nodeRun,
	pngFile,
	RETRY_ON_FAIL,
	responseObject,
	responsesParams,
	sendError,
	sseDelta,
	sseEnd,
	sseFrame,
	sseHead,
} from '../support/hostileServers';
import type { Streaming } from '../support/hostileServers';
import { resetConnection, sendJson, startScriptedServer } from '../support/scriptedServer';

const KEY = 'sentinel-key-properties-paid-1a2b';
const PNG = pngFile(64, 7);

/** Answers that say "not accepted": nothing was created, another POST may follow. */
type NotAccepted = '429' | '502' | '503' | '400' | '422';
/** Answers after which the service may have the work: accepted, or an unknown outcome. */
const PAID = ['accept', '500', '504', 'reset', 'garbage', 'redirect', 'broken', 'errorEvent'] as const;
type PaidAnswer = NotAccepted | (typeof PAID)[number];

type Target =
	| { node: 'video'; after: 'none' | 'success' | 'failure' | 'noContent' }
	| { node: 'chat' | 'responses'; streaming: Streaming; where: 'user' | 'system' }
	| { node: 'image'; after: 'b64' | 'url' | 'urlMissing' };

interface Case {
	target: Target;
	/** What changes between tries, in the paid body. */
	changing: 'none' | '$now.toMillis()' | '$now.toISO()' | 'Math.random()';
	/** The answers to each item's POSTs, in order; accepted once they run out. */
	scripts: PaidAnswer[][];
	maxTries: number;
	retryOnFail: boolean;
	continueOnFail: boolean;
}

const PATHS = {
	video: '/v1/tasks/vendor',
	chat: '/v1/chat/completions',
	responses: '/v1/responses',
	image: '/v1/images/generations',
};

// 502/503 are retried inside the node with a backoff of 0.25–1 s, and a 429 paces the credential: rarer, to keep the
// runs short; the rest are immediate.
const answer: fc.Arbitrary<PaidAnswer> = fc.oneof(
	{ arbitrary: fc.constantFrom<PaidAnswer>('400', '422'), weight: 3 },
	{ arbitrary: fc.constantFrom<PaidAnswer>('429', '502', '503'), weight: 1 },
	{ arbitrary: fc.constantFrom<PaidAnswer>(...PAID), weight: 8 },
);

const target: fc.Arbitrary<Target> = fc.oneof(
	fc.record({
		node: fc.constant('video' as const),
		after: fc.constantFrom('none' as const, 'success' as const, 'failure' as const, 'noContent' as const),
	}),
	fc.record({
		node: fc.constantFrom('chat' as const, 'responses' as const),
		streaming: fc.constantFrom<Streaming>('always', 'never'),
		where: fc.constantFrom('user' as const, 'system' as const),
	}),
	fc.record({
		node: fc.constant('image' as const),
		after: fc.constantFrom('b64' as const, 'url' as const, 'urlMissing' as const),
	}),
);

const cases: fc.Arbitrary<Case> = fc.record({
	target,
	changing: fc.constantFrom(
		'none' as const,
		'$now.toMillis()' as const,
		'$now.toISO()' as const,
		'Math.random()' as const,
	),
	scripts: fc.array(fc.array(answer, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
	maxTries: fc.integer({ min: 2, max: 4 }),
	retryOnFail: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
	continueOnFail: fc.boolean(),
});

/** The node as the case configures it; the item index (`item-<i>`) goes into the paid body. */
function nodeOf(c: Case) {
	const marker = 'item-{{ $json.i }}';
	const changing = c.changing === 'none' ? '' : ` {{ ${c.changing} }}`;
	const text = `=${marker}${changing}`;
	const settings = {
		...(c.retryOnFail ? { ...RETRY_ON_FAIL, maxTries: c.maxTries } : {}),
		continueOnFail: c.continueOnFail,
	};
	const { target: t } = c;
	switch (t.node) {
		case 'video':
			return {
				type: 'genGatewayVideo',
				parameters: generateParams(text, {
					waitForCompletion: t.after !== 'none',
					downloadVideo: t.after === 'noContent',
				}),
				...settings,
			};
		case 'chat':
			return {
				type: 'genGatewayChat',
				parameters:
					t.where === 'user'
						? chatParams(text, t.streaming)
						: chatParams(`=${marker}`, t.streaming, {}, `=You are terse.${changing}`),
				...settings,
			};
		case 'responses':
			return { type: 'genGatewayChat', parameters: responsesParams(text, t.streaming), ...settings };
		case 'image':
			return {
				type: 'genGatewayImage',
				parameters: imageParams(text, { responseFormat: t.after === 'b64' ? 'b64_json' : 'url' }),
				...settings,
			};
	}
}

const streamed = (t: Target) => 'streaming' in t && t.streaming === 'always';

/** The accepted answer of the target's paid POST. */
function accept(c: Case, res: ServerResponse, item: number, count: number, url: string): void {
	const { target: t } = c;
	if (t.node === 'video') return sendJson(res, 200, { task_id: `task_i${item}n${count}` });
	if (t.node === 'image') {
		const image = t.after === 'b64' ? { b64_json: PNG.toString('base64') } : { url: `${url}/files/item-${item}.png` };
		return sendJson(res, 200, { created: 1, data: [image] });
	}
	if (!streamed(t)) return sendJson(res, 200, t.node === 'chat' ? completion('ok') : responseObject('ok'));
	sseHead(res);
	res.end(`${sseDelta(t.node, 'o')}${sseDelta(t.node, 'k')}${sseEnd(t.node, 'ok')}`);
}

/** Carries out one answer to a paid POST. */
function paidAnswer(c: Case, res: ServerResponse, kind: PaidAnswer, item: number, count: number, url: string): void {
	const { target: t } = c;
	switch (kind) {
		case 'accept':
			return accept(c, res, item, count, url);
		case '429':
			return sendError(res, 429, 'slow down', { 'retry-after': '0' });
		case '400':
		case '422':
		case '500':
		case '502':
		case '503':
		case '504':
			return sendError(res, Number(kind), `answered ${kind}`);
		case 'reset':
			return resetConnection(res);
		case 'garbage':
			res.writeHead(200, { 'content-type': 'application/json' });
			return void res.end('{"id": "x", "choices": [');
		case 'redirect':
			res.writeHead(307, { location: '/v1/elsewhere' });
			return void res.end();
		case 'broken':
		case 'errorEvent':
			if (!streamed(t)) {
				// A JSON answer cut in the middle of its announced length.
				res.writeHead(200, { 'content-type': 'application/json', 'content-length': 400 });
				return void res.write('{"id": "x", "object": ', () => res.socket?.destroy());
			}
			if (t.node !== 'chat' && t.node !== 'responses') return;
			sseHead(res);
			if (kind === 'broken') return void res.write(sseDelta(t.node, 'Hel'), () => res.socket?.destroy());
			return void res.end(`${sseDelta(t.node, 'Hel')}${sseFrame({ message: 'Upstream overloaded' }, 'error')}`);
	}
}

interface Post {
	item: number;
	answer: PaidAnswer;
}

/** The loopback service of a case: the paid POST answered by each item's script, the reads after it by `after`. */
async function serviceFor(c: Case) {
	const posts: Post[] = [];
	const server = await startScriptedServer((req, res) => {
		const path = req.path.split('?')[0];
		if (req.method === 'POST' && path === PATHS[c.target.node]) {
			const item = Number(/item-(\d+)/.exec(req.body)?.[1] ?? -1);
			const count = posts.filter((post) => post.item === item).length;
			const kind = c.scripts[item]?.[count] ?? 'accept';
			posts.push({ item, answer: kind });
			return paidAnswer(c, res, kind, item, count, server.url);
		}
		const after = 'after' in c.target ? c.target.after : 'none';
		if (/^\/v1\/tasks\/task_[^/]+$/.test(path)) {
			return sendJson(
				res,
				200,
				after === 'failure' ? { status: 'FAILURE', fail_reason: 'blocked' } : { status: 'SUCCESS' },
			);
		}
		if (path.endsWith('/artifacts'))
			return sendJson(res, 200, [{ key: 'video', type: 'video', mime_type: 'video/mp4' }]);
		// The video's content is gone (404): the node fails after the task was paid.
		if (path.endsWith('/artifacts/video/content')) return sendError(res, 404, 'no such artifact');
		if (path.startsWith('/files/') && after === 'url') {
			res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
			return void res.end(PNG);
		}
		sendError(res, 404, `no route ${req.method} ${path}`);
	});
	return { server, posts };
}

/** The POSTs of each item that followed an answer after which the service may have the work. */
function paidTwice(posts: Post[]): string[] {
	const found: string[] = [];
	const items = [...new Set(posts.map((post) => post.item))];
	for (const item of items) {
		const answers = posts.filter((post) => post.item === item).map((post) => post.answer);
		const paidAt = answers.findIndex((kind) => (PAID as readonly string[]).includes(kind));
		if (paidAt !== -1 && paidAt < answers.length - 1) {
			found.push(
				`item ${item}: POSTed ${answers.length} times, again after "${answers[paidAt]}" (answers: ${answers.join(', ')})`,
			);
		}
	}
	return found;
}

jest.setTimeout(180_000);

it('a paid POST that was accepted, or whose outcome is unknown, is never sent again for its item', async () => {
	await checkProperty(
		cases,
		async (c) => {
			const { server, posts } = await serviceFor(c);
			try {
				const input = c.scripts.map((_, i) => ({ i }));
				const result = await runWorkflow(nodeRun(server.url, KEY, nodeOf(c), { input }));
				// Sanity: every paid body carried its item's index.
				expect(posts.every((post) => post.item >= 0 && post.item < input.length)).toBe(true);
				const twice = paidTwice(posts);
				if (twice.length > 0) {
					throw new Error(`Paid twice:\n${twice.join('\n')}\nThe node's error: ${result.nodeError('Node')?.message}`);
				}
			} finally {
				await server.close();
			}
		},
		{ numRuns: 40 },
	);
});
