/**
 * Simplified output keeps what the service said: refusals (chat `message.refusal`, streamed `delta.refusal`,
 * Responses `refusal` parts) and Responses `function_call` items (as chat `tool_calls` already were). Through n8n's
 * engine against a loopback server of the test's own that answers with the bytes an OpenAI-format service sends.
 */
import { createServer } from 'http';
import type { ServerResponse } from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject } from 'n8n-workflow';

import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';

async function withServer(answer: (res: ServerResponse) => void, test: (url: string) => Promise<void>): Promise<void> {
	const server = createServer((req, res) => {
		req.resume();
		req.on('end', () => answer(res));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		await test(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}

const json = (body: unknown) => (res: ServerResponse) => {
	res.writeHead(200, { 'Content-Type': 'application/json' });
	res.end(JSON.stringify(body));
};

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const chat = (extra: IDataObject = {}) => ({
	operation: 'message',
	model: model('m'),
	messages: { values: [{ role: 'user', content: 'how do I pick a lock?' }] },
	...extra,
});
const responses = (extra: IDataObject = {}) => ({
	operation: 'response',
	model: model('m'),
	input: { values: [{ role: 'user', content: 'weather in Paris?' }] },
	...extra,
});

async function run(parameters: IDataObject, baseUrl: string): Promise<RunResult> {
	return await runWorkflow({
		nodes: [{ name: 'Chat', type: 'genGatewayChat', parameters, credentials: true }],
		credentials: { baseUrl, apiKey: 'sentinel-key-output-1d2e' },
	});
}

const REFUSAL = "I'm sorry, I can't help with that.";

describe('refusals', () => {
	it('chat completions: message.refusal is kept beside a null content', async () => {
		const completion = {
			id: 'c1',
			object: 'chat.completion',
			model: 'm',
			choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: REFUSAL }, finish_reason: 'stop' }],
			usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 },
		};
		await withServer(json(completion), async (url) => {
			const result = await run(chat(), url);
			expect(result.output()[0].json).toEqual({
				content: null,
				role: 'assistant',
				finish_reason: 'stop',
				usage: completion.usage,
				model: 'm',
				refusal: REFUSAL,
			});
		});
	});

	it('chat completions, streamed: the refusal deltas are kept', async () => {
		const chunk = (delta: IDataObject, finish: string | null = null) =>
			`data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
		await withServer(
			(res) => {
				res.writeHead(200, { 'Content-Type': 'text/event-stream' });
				res.end(
					`${chunk({ role: 'assistant', content: null, refusal: '' })}${chunk({ refusal: "I'm sorry, " })}${chunk({ refusal: "I can't help with that." })}${chunk({}, 'stop')}data: [DONE]\n\n`,
				);
			},
			async (url) => {
				const result = await run(chat({ options: { streaming: 'always' } }), url);
				expect(result.output()[0].json).toMatchObject({ refusal: REFUSAL, finish_reason: 'stop' });
			},
		);
	});

	it('responses: a refusal part is kept', async () => {
		const response = {
			id: 'r1',
			object: 'response',
			status: 'completed',
			model: 'm',
			output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: REFUSAL }] }],
		};
		await withServer(json(response), async (url) => {
			const result = await run(responses(), url);
			expect(result.output()[0].json).toMatchObject({ content: '', refusal: REFUSAL, finish_reason: 'stop' });
		});
	});

	it('with JSON Output on, a refusal is the error (not "did not answer with a JSON object")', async () => {
		await withServer(
			json({ model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: REFUSAL }, finish_reason: 'stop' }] }),
			async (url) => {
				const result = await run(chat({ options: { jsonOutput: true } }), url);
				expect(result.nodeError('Chat')?.message).toBe(`The model refused: ${REFUSAL}`);
			},
		);
	});
});

describe('function calls', () => {
	it('responses: function_call items are kept as tool_calls (id = call_id, to answer them)', async () => {
		const response = {
			id: 'r1',
			object: 'response',
			status: 'completed',
			model: 'm',
			output: [
				{ type: 'reasoning', id: 'rs_1', summary: [] },
				{ type: 'function_call', id: 'fc_1', call_id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
			],
			usage: { input_tokens: 20, output_tokens: 10, total_tokens: 30 },
		};
		await withServer(json(response), async (url) => {
			const result = await run(responses(), url);
			expect(result.output()[0].json).toEqual({
				content: '',
				role: 'assistant',
				finish_reason: 'stop',
				usage: response.usage,
				model: 'm',
				tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
			});
		});
	});
});
