/**
 * The bound on a streamed answer as a whole (issue 37, 7): each event is bounded at 8 MiB, and the assembled answer at
 * Max Answer Size (Chat node option, default 32 MB; the Chat Model uses the default, and only its case feeds more than
 * 32 MB, to keep the load low). A stream of 1 MB deltas that never sends [DONE] stops being read at the bound; the
 * error names the bound, its value and the option, and keeps only a cut partialContent. Before the fix the whole
 * stream was read and its 40 MB put into partialContent.
 * The Chat node through n8n's engine, the Chat Model through n8n-core's real supply context; loopback servers.
 */
import type { ServerResponse } from 'node:http';
import type { IDataObject } from 'n8n-workflow';

import { optionsProperty } from '../../nodes/GenGatewayChat/options';
import { maxAnswerBytes } from '../../nodes/GenGatewayChat/stream/answerBound';
import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { runWorkflow } from '../harness/engine';
import { postsTo, startScriptedServer } from '../support/scriptedServer';
import type { Answer, ScriptedServer } from '../support/scriptedServer';
import { chatModelSupplyContext } from '../support/supplyData';

jest.setTimeout(120_000);

const API_KEY = 'sentinel-key-answerbound-91ce';
const MiB = 1024 * 1024;
const KEPT = 64 * 1024;
const model = (value: string) => ({ __rl: true, mode: 'id', value });
const frame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const MB_TEXT = 'a'.repeat(MiB);
const chatDelta = frame({
	id: 'c1',
	object: 'chat.completion.chunk',
	model: 'm',
	choices: [{ index: 0, delta: { content: MB_TEXT } }],
});
const responseDelta =
	`event: response.output_text.delta\n${frame({ type: 'response.output_text.delta', delta: MB_TEXT })}`;

type ErrorShape = Error & { description?: string; context?: IDataObject };

/** Writes `event` up to `count` times (no [DONE]), honouring backpressure; counts what it wrote. */
function endless(event: string, count: number, sent: { events: number }) {
	return async (_req: unknown, res: ServerResponse) => {
		res.writeHead(200, { 'Content-Type': 'text/event-stream' });
		while (sent.events < count && !res.destroyed) {
			sent.events++;
			if (!res.write(event)) {
				await new Promise<void>((resolve) => {
					const done = () => {
						res.off('drain', done);
						res.off('close', done);
						resolve();
					};
					res.on('drain', done);
					res.on('close', done);
				});
			}
		}
		if (!res.destroyed) res.end();
	};
}

async function withServer(answer: Answer, test: (s: ScriptedServer) => Promise<void>) {
	const server = await startScriptedServer(answer);
	try {
		await test(server);
	} finally {
		await server.close();
	}
}

async function runChat(server: ScriptedServer, parameters: IDataObject) {
	const result = await runWorkflow({
		nodes: [{ name: 'Node', type: 'genGatewayChat', parameters, credentials: true }],
		credentials: { baseUrl: server.url, apiKey: API_KEY },
	});
	return result.nodeError('Node') as ErrorShape;
}

function expectBounded(error: ErrorShape, mb: number, option: boolean) {
	expect(error).toBeDefined();
	expect(error.message).toContain(`Max Answer Size (${mb} MB)`);
	if (option) expect(error.description).toContain('"Max Answer Size (MB)"');
	expect(error.context?.outcomeUnknown).toBe(true);
	const partial = error.context?.partialContent as string;
	expect(typeof partial).toBe('string');
	expect(partial.length).toBeGreaterThan(0);
	expect(partial.length).toBeLessThanOrEqual(KEPT);
}

describe('Chat node: the assembled answer of a stream is bounded by Max Answer Size', () => {
	it('chat completions, Max Answer Size 3 MB: stops reading past 3 MB, the error names the option', async () => {
		const sent = { events: 0 };
		await withServer(endless(chatDelta, 40, sent), async (server) => {
			const error = await runChat(server, {
				operation: 'message',
				model: model('m'),
				messages: { values: [{ role: 'user', content: 'hi' }] },
				options: { streaming: 'always', maxAnswerSize: 3 },
			});
			expectBounded(error, 3, true);
			expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
			expect(sent.events).toBeLessThan(40);
		});
	});

	it('responses, Max Answer Size 2 MB: the same bound on the deltas of a response', async () => {
		const sent = { events: 0 };
		await withServer(endless(responseDelta, 40, sent), async (server) => {
			const error = await runChat(server, {
				operation: 'response',
				model: model('m'),
				input: { values: [{ role: 'user', content: 'hi' }] },
				options: { streaming: 'always', maxAnswerSize: 2 },
			});
			expectBounded(error, 2, true);
			expect(sent.events).toBeLessThan(40);
		});
	});

	it('the option absent (a saved workflow): the default, 32 MB', () => {
		const option = optionsProperty.options?.find((o) => o.name === 'maxAnswerSize') as { default?: unknown };
		expect(option.default).toBe(32);
		expect(maxAnswerBytes(undefined)).toBe(32 * MiB);
		expect(maxAnswerBytes(3)).toBe(3 * MiB);
	});
});

describe('Chat Model: the same default bound', () => {
	it('a stream of 40 × 1 MB without [DONE] stops at 32 MB with the bound named', async () => {
		const sent = { events: 0 };
		await withServer(endless(chatDelta, 40, sent), async (server) => {
			const supply = chatModelSupplyContext({
				baseUrl: server.url,
				apiKey: API_KEY,
				parameters: { model: { __rl: true, mode: 'id', value: 'm' }, options: {} },
			});
			const supplied = await new GenGatewayChatModel().supplyData.call(supply.ctx, 0);
			const chatModel = supplied.response as { stream(input: unknown): Promise<AsyncIterable<unknown>> };
			let error: ErrorShape | undefined;
			try {
				for await (const _piece of await chatModel.stream('hi')) void _piece;
			} catch (caught) {
				error = caught as ErrorShape;
			}
			expectBounded(error as ErrorShape, 32, false);
			expect(sent.events).toBeLessThan(40);
		});
	});
});

/**
 * Writes `head`, then `filler` every 300 ms for `forMs` (many times the bound under test), then `tail`: the socket is
 * never idle for the Timeout. Before issue 51's fix the call ran to the tail.
 */
function trickling(contentType: string, head: string, filler: string, forMs: number, tail: string, hungUp: { by: boolean }) {
	return (_req: unknown, res: ServerResponse) => {
		res.writeHead(200, { 'Content-Type': contentType });
		res.write(head);
		const drip = setInterval(() => res.write(filler), 300);
		const end = setTimeout(() => {
			clearInterval(drip);
			res.end(tail);
		}, forMs);
		res.on('close', () => {
			clearInterval(drip);
			clearTimeout(end);
			if (!res.writableEnded) hungUp.by = true;
		});
	};
}

async function chatModelCall(server: ScriptedServer, options: IDataObject, streamed: boolean): Promise<ErrorShape | undefined> {
	const supply = chatModelSupplyContext({
		baseUrl: server.url,
		apiKey: API_KEY,
		parameters: { model: { __rl: true, mode: 'id', value: 'm' }, options },
	});
	const supplied = await new GenGatewayChatModel().supplyData.call(supply.ctx, 0);
	const chatModel = supplied.response as {
		stream(input: unknown): Promise<AsyncIterable<unknown>>;
		invoke(input: unknown): Promise<unknown>;
	};
	try {
		if (streamed) for await (const _piece of await chatModel.stream('hi')) void _piece;
		else await chatModel.invoke('hi');
	} catch (caught) {
		return caught as ErrorShape;
	}
	return undefined;
}

describe('Chat Model: the time of an answer is bounded as a whole (issue 51, 6)', () => {
	const completionText = JSON.stringify({
		id: 'c1',
		object: 'chat.completion',
		model: 'm',
		choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }],
	});

	it('not streamed, Timeout 1 s, `{` then a space every 300 ms: the Timeout ends it, one POST', async () => {
		const hungUp = { by: false };
		await withServer(trickling('application/json', '{', ' ', 15_000, completionText.slice(1), hungUp), async (server) => {
			const error = await chatModelCall(server, { timeout: 1 }, false);
			expect(error?.message).toBe(
				'The outcome of POST /v1/chat/completions is unknown: no answer within 1 s (its timeout ran out). The service may have accepted it (and may charge for it), so it was not resubmitted.',
			);
			expect(error?.context?.outcomeUnknown).toBe(true);
			expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
		});
	});

	it('streamed, Max Answer Time 0.04 min, `: PING` every 300 ms: Max Answer Time ends it, named', async () => {
		const hungUp = { by: false };
		const first = frame({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: 'Hel' } }] });
		await withServer(trickling('text/event-stream', first, ': PING\n\n', 20_000, 'data: [DONE]\n\n', hungUp), async (server) => {
			const error = await chatModelCall(server, { timeout: 1, maxAnswerTime: 0.04 }, true);
			expect(error?.message).toContain("(the node's Max Answer Time ran out: the answer was not complete after 0.04 min in all)");
			expect(error?.description).toContain('raise the node\'s "Max Answer Time (Minutes)" option');
			expect(error?.context?.partialContent).toBe('Hel');
			expect(error?.context?.outcomeUnknown).toBe(true);
			expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
		});
	});

	it('the option absent (a saved workflow): 60 minutes', () => {
		const node = new GenGatewayChatModel();
		const options = node.description.properties.find((p) => p.name === 'options');
		const option = (options?.options ?? []).find((o) => (o as { name: string }).name === 'maxAnswerTime') as { default?: unknown };
		expect(option.default).toBe(60);
		const chat = optionsProperty.options?.find((o) => o.name === 'maxAnswerTime') as { default?: unknown };
		expect(chat.default).toBe(60);
	});
});
