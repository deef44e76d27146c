/**
 * The Chat Model's call identity (completionCall.ts, callSlot), on n8n-core's engine with root nodes that ask for the
 * model as n8n's LangChain roots do (test/support/modelRoot.ts): the root's run and the conversation without its
 * system messages, never a call's position. Found by an adversarial review of issue 37 (each failed with the first
 * fix, which keyed a call by supplyData's index and its number on the supplied model): root nodes pass index 0 (it is
 * not the root's item), the Basic LLM Chain asks for the model once per item, an agent shares one model across items,
 * and two root nodes can share one Chat Model.
 */
import { sendJson, startScriptedServer, postsTo } from '../support/scriptedServer';
import { rootOutput, runWithModel } from '../support/modelRoot';

const API_KEY = 'sk-attack-model-1234567890';
const completion = (text: string) => ({
	id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
	choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
});
const askedOf = (body: string) => (JSON.parse(body) as { messages: Array<{ content: string }> }).messages.at(-1)!.content;

/** The first POST is answered 500 (an unknown outcome: may have been charged); every other one is answered. */
const firstFails = async () => {
	let posts = 0;
	return await startScriptedServer((req, res) => {
		if (++posts === 1) return sendJson(res, 500, { error: { message: 'internal' } });
		sendJson(res, 200, completion(`answer to ${askedOf(req.body)}`));
	});
};

it('a chain over 3 rows (model asked per item, Continue On Fail): row 1 unknown, rows 2 and 3 are new requests', async () => {
	const server = await firstFails();
	try {
		const run = await runWithModel({
			roots: [{ name: 'Chain', parameters: { supply: 'perItem' }, settings: { continueOnFail: true } }],
			input: [{ q: 'row one' }, { q: 'row two' }, { q: 'row three' }],
			credentials: { baseUrl: server.url, apiKey: API_KEY },
		});
		const out = rootOutput(run, 'Chain');
		expect(postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body))).toEqual(['row one', 'row two', 'row three']);
		expect(out[1].text).toBe('answer to row two');
		expect(out[2].text).toBe('answer to row three');
	} finally {
		await server.close();
	}
});

it('two root nodes share one Chat Model (Continue On Fail): the second root\'s first call is a new request', async () => {
	const server = await firstFails();
	try {
		const run = await runWithModel({
			roots: [
				{ name: 'Summarise', parameters: { supply: 'once', prompt: '=summarise {{ $json.q }}' }, settings: { continueOnFail: true } },
				{ name: 'Translate', parameters: { supply: 'once', prompt: '=translate it' }, settings: { continueOnFail: true } },
			],
			input: [{ q: 'a text' }],
			credentials: { baseUrl: server.url, apiKey: API_KEY },
		});
		expect(postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body))).toEqual(['summarise a text', 'translate it']);
		expect(rootOutput(run, 'Translate')).toEqual([{ text: 'answer to translate it' }]);
	} finally {
		await server.close();
	}
});

it('agent loop (model shared by the items, as Agent V1/V2), Retry On Fail: a different number of steps in the retry pays the unknown call again', async () => {
	const seen = new Map<string, number>();
	const server = await startScriptedServer((req, res) => {
		const asked = askedOf(req.body);
		const times = (seen.get(asked) ?? 0) + 1;
		seen.set(asked, times);
		// Try 1: item one asks for a tool (2 calls), item two's call has an unknown outcome (500).
		// Try 2: the model answers item one at once (LLMs are not deterministic): 1 call.
		if (asked === 'item one') return sendJson(res, 200, completion(times === 1 ? 'TOOL' : 'done'));
		if (asked === 'item two' && times === 1) return sendJson(res, 500, { error: { message: 'internal' } });
		sendJson(res, 200, completion('done'));
	});
	try {
		const run = await runWithModel({
			roots: [{ name: 'Agent', parameters: { supply: 'once', agentLoop: true }, settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 1 } }],
			input: [{ q: 'item one' }, { q: 'item two' }],
			credentials: { baseUrl: server.url, apiKey: API_KEY },
		});
		const asked = postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body));
		// 'item two' had an unknown outcome in try 1: it must never be sent again.
		expect(asked.filter((a) => a === 'item two')).toHaveLength(1);
		expect(run.data.resultData.error?.message).toMatch(/^Not resubmitted/);
	} finally {
		await server.close();
	}
});

/**
 * Issue 51, defect 4: rows with the same text are distinct calls. Keyed by the conversation alone, row 3 shared row 1's
 * slot and was refused after row 1's unknown outcome although it had never been sent (no retry involved).
 */
describe('rows with the same text (issue 51)', () => {
	const rows = [{ q: 'refund please' }, { q: 'where is my order' }, { q: 'refund please' }];

	it.each(['perItem', 'once'])('a chain over rows with a repeated text (model asked %s, Continue On Fail), row 1 answered 500: row 3 is sent', async (supply) => {
		const server = await firstFails();
		try {
			const run = await runWithModel({
				roots: [{ name: 'Chain', parameters: { supply }, settings: { continueOnFail: true } }],
				input: rows,
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body))).toEqual(['refund please', 'where is my order', 'refund please']);
			const out = rootOutput(run, 'Chain');
			expect(out[0].error).toMatch(/internal|500/i);
			expect(out[2].text).toBe('answer to refund please');
		} finally {
			await server.close();
		}
	});

	it('the chain retried (Retry On Fail): row 1, whose outcome was unknown, is never sent again; row 3 is', async () => {
		const server = await firstFails();
		try {
			await runWithModel({
				roots: [{ name: 'Chain', parameters: { supply: 'perItem' }, settings: { continueOnFail: true, retryOnFail: true, maxTries: 2, waitBetweenTries: 1 } }],
				input: rows,
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			// Try 1: all three rows. Try 2 (its first item failed): row 1 refused, rows 2 and 3 asked again.
			expect(postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body))).toEqual([
				'refund please', 'where is my order', 'refund please', 'where is my order', 'refund please',
			]);
		} finally {
			await server.close();
		}
	});
});

/**
 * Found by an attack on issue 51: the Basic LLM Chain's prompt is the user message, so a prompt with `{{ $now }}` made
 * a retried row another conversation, and its unknown outcome was sent again on Retry On Fail. A model's first call in
 * a try is also known by its place (a chain's row is its model); an agent's later calls are not (a retry may take
 * another number of steps), so that one is still sent.
 */
describe('a retried call whose text changes between tries (issue 51)', () => {
	it('a chain whose prompt holds {{ $now }}, Retry On Fail, the POST answered 500: never sent again', async () => {
		const server = await firstFails();
		try {
			const run = await runWithModel({
				roots: [
					{
						name: 'Chain',
						parameters: { supply: 'perItem', prompt: '=Summarise {{ $json.q }} as of {{ $now.toMillis() }}' },
						settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 1 },
					},
				],
				input: [{ q: 'the report' }],
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			expect(postsTo(server, '/v1/chat/completions')).toHaveLength(1);
			expect(run.data.resultData.error?.message).toMatch(/^Not resubmitted/);
		} finally {
			await server.close();
		}
	});

	it('an agent whose retry takes one step more: its later call is sent, the unknown one refused', async () => {
		const seen = new Map<string, number>();
		const server = await startScriptedServer((req, res) => {
			const asked = askedOf(req.body);
			const times = (seen.get(asked) ?? 0) + 1;
			seen.set(asked, times);
			// Try 1: item one is answered at once, item two's call has an unknown outcome (500). Try 2: item one asks
			// for a tool first, so its second call takes the place item two's call had in try 1.
			if (asked === 'item one') return sendJson(res, 200, completion(times === 2 ? 'TOOL' : 'done'));
			if (asked === 'item two' && times === 1) return sendJson(res, 500, { error: { message: 'internal' } });
			sendJson(res, 200, completion('done'));
		});
		try {
			await runWithModel({
				roots: [{ name: 'Agent', parameters: { supply: 'once', agentLoop: true }, settings: { retryOnFail: true, maxTries: 2, waitBetweenTries: 1 } }],
				input: [{ q: 'item one' }, { q: 'item two' }],
				credentials: { baseUrl: server.url, apiKey: API_KEY },
			});
			const asked = postsTo(server, '/v1/chat/completions').map((r) => askedOf(r.body));
			// Item one's second call of try 2 has item two's place of try 1: sent all the same.
			expect(asked).toEqual(['item one', 'item two', 'item one', 'item one [tool result 1]']);
		} finally {
			await server.close();
		}
	});
});
