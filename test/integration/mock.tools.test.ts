/** Tool calls in the mock's chat completions: scripted by markers, plain and streamed, as OpenAI sends them. */
import { spawnMockProcess, type MockClient } from '../mock/process';
import { rawRequest } from '../mock/rawRequest';
import { toolArguments, withoutToolMarkers } from '../mock/toolCalls';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess();
});
afterAll(() => mock?.stop());
beforeEach(() => mock.reset());

const post = async (body: unknown) => {
	const res = await rawRequest(`${mock.url}/v1/chat/completions`, { headers: { Authorization: `Bearer ${mock.apiKey}` }, body });
	return { ...res, text: res.body.toString() };
};
const chunksOf = (text: string) =>
	text
		.split('\n')
		.filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
		.map((l) => JSON.parse(l.slice(6)));

// What n8n's agent offers for a node tool whose fields are filled by $fromAI(): every key required.
const videoTool = {
	type: 'function',
	function: {
		name: 'Generate_Video',
		description: 'Generate a video',
		parameters: {
			type: 'object',
			properties: {
				prompt: { type: 'string', description: 'What the video should show' },
				duration: { type: 'number', description: 'Seconds' },
				aspect_ratio: { type: 'string', enum: ['16:9', '9:16'] },
			},
			required: ['prompt', 'duration', 'aspect_ratio'],
			additionalProperties: false,
		},
	},
};
const modelsTool = { type: 'function', function: { name: 'List_Models', parameters: { type: 'object', properties: {} } } };
const tools = [modelsTool, videoTool];
const ask = 'A fox in the snow [[instant]] [[tool=Generate_Video]] [[arg.duration=6]]';

describe('chat completions with tools', () => {
	it('calls the tool the marker names, with arguments from its schema and the message', async () => {
		const res = await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools, tool_choice: 'auto' });
		expect(res.status).toBe(200);
		const body = JSON.parse(res.text);
		const [choice] = body.choices;
		expect(choice.finish_reason).toBe('tool_calls');
		expect(choice.message.content).toBeNull();
		expect(choice.message.tool_calls).toEqual([
			{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Generate_Video', arguments: expect.any(String) } },
		]);
		// The tool markers are the "model's" instructions; the video marker stays in the prompt for the mock's task.
		expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual({
			prompt: 'A fox in the snow [[instant]]',
			duration: 6,
			aspect_ratio: '16:9',
		});
		expect(body.usage.completion_tokens).toBeGreaterThan(0);
	});

	it('streams the call as OpenAI does: id and name first, the arguments in pieces, finish_reason tool_calls', async () => {
		const res = await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools, stream: true });
		expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
		const chunks = chunksOf(res.text);
		const first = chunks[0].choices[0].delta;
		expect(first.tool_calls[0]).toMatchObject({ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Generate_Video', arguments: '' } });
		const pieces = chunks.slice(1, -1).map((c) => c.choices[0].delta.tool_calls[0]);
		expect(pieces.length).toBeGreaterThan(1);
		expect(pieces.every((p) => p.index === 0 && p.id === undefined)).toBe(true);
		expect(JSON.parse(pieces.map((p) => p.function.arguments).join(''))).toMatchObject({ duration: 6 });
		expect(chunks.every((c) => !c.choices[0].delta.content)).toBe(true);
		expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('tool_calls');
	});

	it('[[calls=N]]: N calls with the same arguments in one answer, each with its own id (plain and streamed)', async () => {
		const content = `${ask} [[calls=2]]`;
		const plain = JSON.parse((await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], tools })).text);
		const calls = plain.choices[0].message.tool_calls as Array<{ id: string; function: { arguments: string } }>;
		expect(calls).toHaveLength(2);
		expect(calls[0].id).not.toBe(calls[1].id);
		expect(calls[1].function.arguments).toBe(calls[0].function.arguments);
		expect(JSON.parse(calls[0].function.arguments).prompt).toBe('A fox in the snow [[instant]]');
		const streamed = chunksOf((await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], tools, stream: true })).text);
		const deltas = streamed.flatMap((c) => (c.choices[0].delta.tool_calls ?? []) as Array<{ index: number; id?: string; function: { arguments: string } }>);
		for (const index of [0, 1]) {
			const mine = deltas.filter((d) => d.index === index);
			expect(mine[0].id).toMatch(/^call_/);
			expect(JSON.parse(mine.map((d) => d.function.arguments).join(''))).toMatchObject({ duration: 6 });
		}
	});

	it('answers after tool results by quoting each, named from the assistant call (plain and streamed)', async () => {
		const messages = [
			{ role: 'system', content: 'You make videos.' },
			{ role: 'user', content: ask },
			{ role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'Generate_Video', arguments: '{}' } }] },
			{ role: 'tool', tool_call_id: 'call_1', content: '[{"task_id":"task_abc","status":"SUCCESS"}]' },
		];
		const plain = JSON.parse((await post({ model: 'gpt-4o-mini', messages, tools })).text);
		expect(plain.choices[0]).toMatchObject({
			finish_reason: 'stop',
			message: { role: 'assistant', content: 'Tool Generate_Video returned: [{"task_id":"task_abc","status":"SUCCESS"}]' },
		});
		expect(plain.choices[0].message.tool_calls).toBeUndefined();
		const streamed = chunksOf((await post({ model: 'gpt-4o-mini', messages, tools, stream: true })).text);
		expect(streamed.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(plain.choices[0].message.content);
	});

	it('echoes as before without a marker, with tool_choice none, or for a tool not offered', async () => {
		for (const body of [
			{ messages: [{ role: 'user', content: 'just talk' }], tools },
			{ messages: [{ role: 'user', content: ask }], tools, tool_choice: 'none' },
			{ messages: [{ role: 'user', content: 'x [[tool=Make_Coffee]]' }], tools },
			{ messages: [{ role: 'user', content: ask }] },
		]) {
			const choice = JSON.parse((await post({ model: 'gpt-4o-mini', ...body })).text).choices[0];
			expect(choice.finish_reason).toBe('stop');
			expect(choice.message.content).toMatch(/^Echo: /);
		}
	});

	it('tool_choice naming a function (or required) calls it without a marker; a partial marker name matches', async () => {
		const forced = JSON.parse(
			(await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: { type: 'function', function: { name: 'List_Models' } } })).text,
		);
		expect(forced.choices[0].message.tool_calls[0].function).toEqual({ name: 'List_Models', arguments: '{}' });
		const required = JSON.parse((await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: 'required' })).text);
		expect(required.choices[0].message.tool_calls[0].function.name).toBe('List_Models');
		const partial = JSON.parse((await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a cat [[tool=video]]' }], tools })).text);
		expect(partial.choices[0].message.tool_calls[0].function.name).toBe('Generate_Video');
	});

	it('rejects malformed tools with 400', async () => {
		const res = await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools: [{ type: 'function', function: {} }] });
		expect(res.status).toBe(400);
		expect(JSON.parse(res.text).error.message).toMatch(/^tools\.0\.function\.name: /);
	});
});

describe('tool arguments', () => {
	it('fill every property: explicit markers (JSON when JSON), a default, text, minimum, boolean, object', () => {
		const parameters = {
			type: 'object',
			properties: {
				prompt: { type: 'string' },
				n: { type: 'number', minimum: 2 },
				size: { type: 'integer', default: 3 },
				audio: { type: 'boolean' },
				extra: { anyOf: [{ type: 'object' }, { type: 'array' }] },
				seed: { type: 'number' },
				ratio: { type: 'string', default: '16:9' },
			},
		};
		expect(toolArguments(parameters, 'make it [[tool=x]] [[arg.seed=42]] [[arg.style="noir"]]')).toEqual({
			prompt: 'make it',
			n: 2,
			size: 3,
			audio: false,
			extra: { text: 'make it' },
			seed: 42,
			ratio: '16:9',
			style: 'noir',
		});
		expect(withoutToolMarkers('[[tool=a]] keep [[slow]] [[arg.k=1]]')).toBe('keep [[slow]]');
	});
});
