import { ChatCompletionAssembler } from '../../nodes/GenGatewayChat/stream/chatCompletionAssembler';
import { ResponseAssembler } from '../../nodes/GenGatewayChat/stream/responseAssembler';
import { StreamEventError } from '../../nodes/GenGatewayChat/stream/assembler';
import { chatCompletionReply, responseFinishReason, responseReply, responseText } from '../../nodes/GenGatewayChat/output';

const chunk = (choices: object[], extra: object = {}) => ({
	id: 'chatcmpl-1',
	object: 'chat.completion.chunk',
	created: 1700000000,
	model: 'gpt-4o-mini',
	choices,
	...extra,
});

describe('ChatCompletionAssembler (chat.completion.chunk → chat.completion)', () => {
	it('concatenates the deltas exactly and keeps role, finish_reason, usage and the head fields', () => {
		const assembler = new ChatCompletionAssembler();
		const pieces = [
			assembler.add('message', chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])),
			assembler.add('message', chunk([{ index: 0, delta: { content: 'Echo:' }, finish_reason: null }])),
			assembler.add('message', chunk([{ index: 0, delta: { content: ' héllo  ' }, finish_reason: null }])),
			assembler.add('message', chunk([{ index: 0, delta: { content: '\nworld' }, finish_reason: null }])),
			assembler.add(
				'message',
				chunk([{ index: 0, delta: {}, finish_reason: 'stop' }], {
					usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
				}),
			),
		];
		expect(pieces).toEqual(['', 'Echo:', ' héllo  ', '\nworld', '']);
		expect(assembler.text()).toBe('Echo: héllo  \nworld');
		expect(assembler.finished()).toBe(false);
		expect(assembler.result()).toEqual({
			id: 'chatcmpl-1',
			object: 'chat.completion',
			created: 1700000000,
			model: 'gpt-4o-mini',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: héllo  \nworld' }, finish_reason: 'stop' }],
			usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
		});
	});

	it("new-api's last chunk with choices [] and the usage keeps every choice and adds the usage", () => {
		const assembler = new ChatCompletionAssembler();
		assembler.add('message', chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }]));
		assembler.add('message', chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
		const usage = { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 };
		expect(assembler.add('message', chunk([], { system_fingerprint: null, usage }))).toBe('');
		expect(assembler.result()).toEqual({
			id: 'chatcmpl-1',
			object: 'chat.completion',
			created: 1700000000,
			model: 'gpt-4o-mini',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
			usage,
		});
	});

	it('keeps several choices apart and forwards only the first', () => {
		const assembler = new ChatCompletionAssembler();
		expect(
			assembler.add('message', chunk([
				{ index: 1, delta: { content: 'B1' } },
				{ index: 0, delta: { content: 'A1' } },
			])),
		).toBe('A1');
		assembler.add('message', chunk([{ index: 1, delta: { content: 'B2' }, finish_reason: 'length' }]));
		const result = assembler.result() as { choices: Array<{ message: { content: string }; finish_reason: string | null }> };
		expect(result.choices.map((c) => c.message.content)).toEqual(['A1', 'B1B2']);
		expect(result.choices.map((c) => c.finish_reason)).toEqual([null, 'length']);
	});

	it('assembles tool calls from argument fragments (content null when only tools were called)', () => {
		const assembler = new ChatCompletionAssembler();
		assembler.add('message', chunk([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] } }]));
		assembler.add('message', chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } }]));
		assembler.add('message', chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, finish_reason: 'tool_calls' }]));
		const reply = chatCompletionReply(assembler.result());
		expect(reply.content).toBeNull();
		expect(reply.finish_reason).toBe('tool_calls');
		expect(reply.tool_calls).toEqual([
			{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
		]);
	});

	it('throws the service message of an error event', () => {
		const assembler = new ChatCompletionAssembler();
		assembler.add('message', chunk([{ index: 0, delta: { content: 'part' } }]));
		expect(() => assembler.add('message', { error: { message: 'upstream overloaded' } })).toThrow(
			new StreamEventError('upstream overloaded'),
		);
		expect(assembler.text()).toBe('part');
	});
});

describe('ResponseAssembler (Responses API events)', () => {
	const full = {
		id: 'resp_1',
		object: 'response',
		status: 'completed',
		model: 'gpt-4o-mini',
		output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Echo: hi there' }] }],
		usage: { input_tokens: 2, output_tokens: 3, total_tokens: 5 },
	};

	it('collects the text deltas, and takes the terminal event as the result', () => {
		const assembler = new ResponseAssembler();
		expect(assembler.add('response.created', { type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } })).toBe('');
		expect(assembler.add('response.output_text.delta', { type: 'response.output_text.delta', delta: 'Echo:' })).toBe('Echo:');
		// The event name alone is enough when the payload has no type.
		expect(assembler.add('response.output_text.delta', { delta: ' hi there' })).toBe(' hi there');
		expect(assembler.finished()).toBe(false);
		assembler.add('response.output_text.done', { type: 'response.output_text.done', text: 'Echo: hi there' });
		assembler.add('response.completed', { type: 'response.completed', response: full });
		expect(assembler.finished()).toBe(true);
		expect(assembler.text()).toBe('Echo: hi there');
		expect(assembler.result()).toEqual(full);
	});

	it('builds a response from the deltas when no terminal event came before [DONE]', () => {
		const assembler = new ResponseAssembler();
		assembler.add('response.created', { type: 'response.created', response: { id: 'resp_9', model: 'm' } });
		assembler.add('x', { type: 'response.output_text.delta', delta: 'abc' });
		const result = assembler.result();
		expect(result.id).toBe('resp_9');
		expect(responseText(result)).toBe('abc');
	});

	it('turns response.failed and error events into service errors', () => {
		expect(() =>
			new ResponseAssembler().add('response.failed', {
				type: 'response.failed',
				response: { status: 'failed', error: { message: 'model crashed' } },
			}),
		).toThrow('model crashed');
		expect(() => new ResponseAssembler().add('error', { type: 'error', message: 'rate limited' })).toThrow('rate limited');
	});
});

describe('simplified replies', () => {
	it('reads a response: output_text parts joined, a refusal part kept apart, status said the chat way', () => {
		const response = {
			model: 'm',
			status: 'incomplete',
			incomplete_details: { reason: 'max_output_tokens' },
			output: [
				{ type: 'reasoning', content: [{ type: 'output_text', text: 'ignored' }] },
				{ type: 'message', content: [{ type: 'output_text', text: 'a' }, { type: 'refusal', refusal: 'x' }, { type: 'output_text', text: 'b' }] },
			],
			usage: { total_tokens: 1 },
		};
		expect(responseReply(response)).toEqual({
			content: 'ab',
			role: 'assistant',
			finish_reason: 'length',
			usage: { total_tokens: 1 },
			model: 'm',
			refusal: 'x',
		});
		expect(responseFinishReason({ status: 'completed' })).toBe('stop');
	});
});
