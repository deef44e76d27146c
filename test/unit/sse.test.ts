import { consumeSse, MAX_EVENT_CHARS, SseEventTooLargeError, SseParser, STOP } from '../../nodes/shared/transport/sse';
import type { SseEvent } from '../../nodes/shared/transport/sse';

/** Feeds the chunks one by one, then ends; returns all events and whether [DONE] was seen. */
function parseChunks(chunks: Array<string | Uint8Array>): { events: SseEvent[]; done: boolean } {
	const parser = new SseParser();
	const events: SseEvent[] = [];
	for (const chunk of chunks) events.push(...parser.push(chunk));
	events.push(...parser.end());
	return { events, done: parser.done };
}

const bytes = (text: string) => new TextEncoder().encode(text);

const CHAT_STREAM = [
	'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n',
	': keep-alive\n\n',
	'data: {"choices":[{"delta":{"content":"Héllo"}}]}\n\n',
	'event: note\nid: 7\ndata: line one\ndata: line two\n\n',
	'data: {"choices":[{"delta":{"content":" wörld 🌍"}}]}\n\n',
	'data: [DONE]\n\n',
].join('');

const EXPECTED: SseEvent[] = [
	{ event: 'message', data: '{"choices":[{"delta":{"role":"assistant","content":""}}]}' },
	{ event: 'message', data: '{"choices":[{"delta":{"content":"Héllo"}}]}' },
	{ event: 'note', data: 'line one\nline two', id: '7' },
	{ event: 'message', data: '{"choices":[{"delta":{"content":" wörld 🌍"}}]}', id: '7' },
];

describe('SseParser', () => {
	it('parses a whole stream in one chunk and stops at [DONE]', () => {
		expect(parseChunks([bytes(CHAT_STREAM)])).toEqual({ events: EXPECTED, done: true });
	});

	it('gives the same events whatever the chunk boundaries (every split point, bytes cut inside characters)', () => {
		const all = bytes(CHAT_STREAM);
		for (let cut = 1; cut < all.length; cut++) {
			const result = parseChunks([all.subarray(0, cut), all.subarray(cut)]);
			expect(result).toEqual({ events: EXPECTED, done: true });
		}
	});

	it('handles a stream fed one byte at a time', () => {
		const all = bytes(CHAT_STREAM);
		const chunks = Array.from(all, (_, i) => all.subarray(i, i + 1));
		expect(parseChunks(chunks)).toEqual({ events: EXPECTED, done: true });
	});

	it('accepts CRLF and lone CR line ends, also when CR and LF arrive in different chunks', () => {
		const crlf = CHAT_STREAM.replace(/\n/g, '\r\n');
		expect(parseChunks([crlf])).toEqual({ events: EXPECTED, done: true });
		const cr = CHAT_STREAM.replace(/\n/g, '\r');
		expect(parseChunks([cr])).toEqual({ events: EXPECTED, done: true });
		// Split between CR and LF: the LF must not count as an extra (event-ending) blank line.
		expect(parseChunks(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual({
			events: [{ event: 'message', data: 'a\nb' }],
			done: false,
		});
	});

	it('ignores comments, unknown fields and retry; reads fields without a colon or without the space', () => {
		const { events } = parseChunks([': hello\nretry: 100\nfoo: bar\ndata:x\ndata\ndata:  two spaces\n\n']);
		expect(events).toEqual([{ event: 'message', data: 'x\n\n two spaces' }]);
	});

	it('does not dispatch an event without data, and resets the event name after each event', () => {
		const { events } = parseChunks(['event: ping\n\n', 'event: named\ndata: 1\n\n', 'data: 2\n\n']);
		expect(events).toEqual([
			{ event: 'named', data: '1' },
			{ event: 'message', data: '2' },
		]);
	});

	it('strips a byte order mark at the start of the stream', () => {
		const { events } = parseChunks([bytes('\uFEFFdata: a\n\n')]);
		expect(events).toEqual([{ event: 'message', data: 'a' }]);
	});

	it('ignores everything after [DONE]', () => {
		const parser = new SseParser();
		expect(parser.push('data: 1\n\ndata: [DONE]\n\ndata: 2\n\n')).toEqual([{ event: 'message', data: '1' }]);
		expect(parser.done).toBe(true);
		expect(parser.push('data: 3\n\n')).toEqual([]);
		expect(parser.end()).toEqual([]);
	});

	it('drops an event cut short at the end of the source, and is not done', () => {
		const result = parseChunks(['data: {"a":1}\n\n', 'data: {"choices":[{"delta":{"content":"Hel']);
		expect(result).toEqual({ events: [{ event: 'message', data: '{"a":1}' }], done: false });
		// Complete lines but no closing blank line: still not dispatched.
		expect(parseChunks(['data: whole line\n']).events).toEqual([]);
	});

	it('counts a final [DONE] without its blank line (the token cannot be half of anything)', () => {
		expect(parseChunks(['data: 1\n\n', 'data: [DONE]\n']).done).toBe(true);
		expect(parseChunks(['data: 1\n\n', 'data: [DONE]']).done).toBe(true);
		expect(parseChunks(['data: [DON']).done).toBe(false);
	});

	it('ends at a data: [DONE] line at once, before any blank line (a service may keep the connection open)', () => {
		const parser = new SseParser();
		expect(parser.push('data: 1\n\ndata: [DONE]\n')).toEqual([{ event: 'message', data: '1' }]);
		expect(parser.done).toBe(true);
		expect(parser.push('\ndata: 2\n\n')).toEqual([]);
	});

	it('does not take [DONE] inside a longer data for the end', () => {
		const result = parseChunks(['data: [DONE] and more\n\n']);
		expect(result).toEqual({ events: [{ event: 'message', data: '[DONE] and more' }], done: false });
	});
});

describe("new-api's bytes (docs GATEWAY-REAL: `: PING` keep-alives, a last usage chunk with choices [])", () => {
	const NEW_API = [
		': PING\n\n',
		'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n',
		': PING\n\n: PING\n\n',
		'data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n',
		': PING\n',
		'\n',
		'data: {"choices":[],"usage":{"total_tokens":5}}\n\n',
		'data: [DONE]\n\n',
	].join('');
	const WANTED: SseEvent[] = [
		{ event: 'message', data: '{"choices":[{"index":0,"delta":{"content":"Hel"}}]}' },
		{ event: 'message', data: '{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}' },
		{ event: 'message', data: '{"choices":[],"usage":{"total_tokens":5}}' },
	];

	it('skips the PING comments wherever the chunks split, and keeps the usage chunk', () => {
		for (let cut = 0; cut <= NEW_API.length; cut++) {
			expect(parseChunks([NEW_API.slice(0, cut), NEW_API.slice(cut)])).toEqual({ events: WANTED, done: true });
		}
	});
});

describe('one event is at most MAX_EVENT_CHARS (8 Mi characters)', () => {
	const MiB = 1024 * 1024;
	const megabyte = 'a'.repeat(MiB);

	it('is 8 MiB', () => {
		expect(MAX_EVENT_CHARS).toBe(8 * MiB);
	});

	it('a data line that never ends: fed 192 MiB, the parser stops past 8 MiB and holds nothing', () => {
		const parser = new SseParser();
		expect(parser.push('data: {"a":1}\n\ndata: "')).toEqual([{ event: 'message', data: '{"a":1}' }]);
		let fed = 0;
		while (fed < 192 && !parser.overflow) {
			parser.push(megabyte);
			fed++;
		}
		expect(parser.overflow).toBeInstanceOf(SseEventTooLargeError);
		expect(parser.overflow?.message).toBe('an event grew past 8 MiB without ending');
		expect(fed).toBe(8);
		// Nothing more is read or kept; the stream is not complete.
		expect(parser.push('\n\ndata: [DONE]\n\n')).toEqual([]);
		expect(parser.end()).toEqual([]);
		expect(parser.done).toBe(false);
		expect((parser as unknown as { partialLine: string }).partialLine).toBe('');
	});

	it('many short data lines without the blank line that ends the event count together', () => {
		const parser = new SseParser(1000);
		for (let i = 0; i < 100; i++) parser.push('data: 123456\n'); // 700 characters held (with the newlines)
		expect(parser.overflow).toBeUndefined();
		for (let i = 0; i < 100; i++) parser.push('data: 123456\n');
		expect(parser.overflow).toBeInstanceOf(SseEventTooLargeError);
	});

	it('an event at the limit is read; every event has its own budget', () => {
		const parser = new SseParser(1000);
		const line = `data:${'x'.repeat(995)}\n\n`; // a line of 1000 characters (the limit counts the line as read)
		for (let i = 0; i < 5; i++) expect(parser.push(line)).toEqual([{ event: 'message', data: 'x'.repeat(995) }]);
		expect(parser.overflow).toBeUndefined();
		expect(parser.push(`data:${'x'.repeat(996)}\n\n`)).toEqual([]);
		expect(parser.overflow).toBeInstanceOf(SseEventTooLargeError);
	});

	it('a line without a line end (a comment, a field) is bounded too, and the events before it in the chunk arrive', () => {
		const parser = new SseParser(1000);
		expect(parser.push(`data: 1\n\n: ${'p'.repeat(2000)}`)).toEqual([{ event: 'message', data: '1' }]);
		expect(parser.overflow).toBeInstanceOf(SseEventTooLargeError);
	});

	it('consumeSse hands over the events before it, then rejects and reads no further', async () => {
		let pulled = 0;
		async function* endless(): AsyncGenerator<string> {
			yield 'data: a\n\ndata: "';
			while (pulled < 192) {
				pulled++;
				yield megabyte;
			}
		}
		const seen: string[] = [];
		await expect(consumeSse(endless(), (e) => void seen.push(e.data))).rejects.toBeInstanceOf(SseEventTooLargeError);
		expect(seen).toEqual(['a']);
		expect(pulled).toBe(8);
	});
});

async function* source(chunks: string[], failAfter?: number): AsyncGenerator<Uint8Array> {
	for (let i = 0; i < chunks.length; i++) {
		if (failAfter !== undefined && i === failAfter) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
		yield bytes(chunks[i]);
	}
}

describe('consumeSse', () => {
	it('hands over events as they complete and reports [DONE]', async () => {
		const seen: string[] = [];
		const result = await consumeSse(source(['data: a\n', '\ndata: b\n\n', 'data: [DONE]\n\n', 'data: c\n\n']), (e) => {
			seen.push(e.data);
		});
		expect(result).toEqual({ done: true, stopped: false });
		expect(seen).toEqual(['a', 'b']);
	});

	it('stops reading the source at [DONE]', async () => {
		let pulled = 0;
		async function* counting(): AsyncGenerator<string> {
			for (const chunk of ['data: a\n\n', 'data: [DONE]\n\n', 'data: never\n\n']) {
				pulled++;
				yield chunk;
			}
		}
		await consumeSse(counting(), () => undefined);
		expect(pulled).toBe(2);
	});

	it('stops reading when the handler says STOP (a terminal event), without [DONE]', async () => {
		let pulled = 0;
		async function* counting(): AsyncGenerator<string> {
			for (const chunk of ['data: a\n\n', 'event: end\ndata: b\n\n', 'data: never\n\n']) {
				pulled++;
				yield chunk;
			}
		}
		const result = await consumeSse(counting(), (e) => (e.event === 'end' ? STOP : undefined));
		expect(result).toEqual({ done: false, stopped: true });
		expect(pulled).toBe(2);
	});

	it('reports a source that ends without [DONE]', async () => {
		const seen: string[] = [];
		const result = await consumeSse(source(['data: a\n\n', 'data: b']), (e) => {
			seen.push(e.data);
		});
		expect(result).toEqual({ done: false, stopped: false });
		expect(seen).toEqual(['a']);
	});

	it('rejects when the source fails, after the events that arrived before', async () => {
		const seen: string[] = [];
		await expect(
			consumeSse(source(['data: a\n\n', 'data: b\n\n', 'data: c\n\n'], 2), (e) => {
				seen.push(e.data);
			}),
		).rejects.toThrow('socket hang up');
		expect(seen).toEqual(['a', 'b']);
	});

	it('awaits an async handler before reading on, and passes its error through', async () => {
		const order: string[] = [];
		await consumeSse(source(['data: a\n\ndata: b\n\n']), async (e) => {
			await new Promise((resolve) => setImmediate(resolve));
			order.push(e.data);
		});
		expect(order).toEqual(['a', 'b']);
		await expect(
			consumeSse(source(['data: a\n\n']), () => {
				throw new Error('handler failed');
			}),
		).rejects.toThrow('handler failed');
	});
});
