/** Every fault kind of the mock, seen from a real client over loopback. */
import { spawnMockProcess, type MockClient } from '../mock/process';
import { rawRequest } from '../mock/rawRequest';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess();
});
afterAll(() => mock?.stop());
beforeEach(() => mock.reset());

const auth = () => ({ Authorization: `Bearer ${mock.apiKey}` });
const models = () => rawRequest(`${mock.url}/v1/models`, { headers: auth() });
const submit = () =>
	rawRequest(`${mock.url}/v1/tasks/vendor`, { headers: auth(), body: { model: 'gk_video', prompt: 'x [[instant]]' } });
const SOCKET_ERRORS = /ECONNRESET|socket hang up|aborted|EPIPE/;

it("'status' answers the status with error.message and Retry-After, once by default", async () => {
	await mock.setFaults([{ path: '^/v1/models$', kind: 'status', status: 429, retryAfter: 7 }]);
	const first = await models();
	expect(first.status).toBe(429);
	expect(first.headers['retry-after']).toBe('7');
	expect(JSON.parse(first.body.toString()).error.message).toMatch(/429/);
	expect((await models()).status).toBe(200);
	expect((await mock.log()).map((e) => e.outcome)).toEqual(['fault:status', undefined]);
});

it('honours skip, times (-1 = always) and method', async () => {
	await mock.setFaults([
		{ path: '^/v1/models$', kind: 'status', status: 503, skip: 1, times: 2 },
		{ method: 'POST', path: '^/v1/chat', kind: 'status', status: 502, times: -1 },
	]);
	const statuses = [];
	for (let i = 0; i < 4; i++) statuses.push((await models()).status);
	expect(statuses).toEqual([200, 503, 503, 200]);
	for (let i = 0; i < 3; i++) {
		const chat = await rawRequest(`${mock.url}/v1/chat/completions`, {
			headers: auth(),
			body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
		});
		expect(chat.status).toBe(502);
	}
	const getChat = await rawRequest(`${mock.url}/v1/chat/completions`, { headers: auth() });
	expect(getChat.status).toBe(404);
});

it("'cut-after-accept' creates the task (which runs) and drops the connection without an answer", async () => {
	await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'cut-after-accept' }]);
	const res = await submit();
	expect(res.error).toMatch(SOCKET_ERRORS);
	expect(res.status).toBe(0);
	expect(await mock.submissions()).toBe(1);
	const [entry] = await mock.log();
	expect(entry).toMatchObject({ outcome: 'accepted-then-cut', status: 0, authorized: true });
	const status = await rawRequest(`${mock.url}/v1/tasks/${entry.taskId}`, { headers: auth() });
	expect(JSON.parse(status.body.toString()).status).toBe('SUCCESS');
	// The next submission is answered normally.
	expect((await submit()).status).toBe(200);
	expect(await mock.submissions()).toBe(2);
});

it("'cut-before' drops the connection and does nothing", async () => {
	await mock.setFaults([{ path: '^/v1/tasks/vendor$', kind: 'cut-before' }]);
	const res = await submit();
	expect(res.error).toMatch(SOCKET_ERRORS);
	expect(await mock.submissions()).toBe(0);
	expect((await mock.log())[0].outcome).toBe('fault:cut-before');
});

it("'malformed-json', 'html' and 'empty' answer unusable bodies", async () => {
	await mock.setFaults([
		{ path: '^/v1/models$', kind: 'malformed-json' },
		{ path: '^/v1/models$', kind: 'html', skip: 1 },
		{ path: '^/v1/models$', kind: 'empty', skip: 2 },
	]);
	const malformed = await models();
	expect(malformed.status).toBe(200);
	expect(malformed.headers['content-type']).toMatch(/application\/json/);
	expect(() => JSON.parse(malformed.body.toString())).toThrow();
	const html = await models();
	expect(html.status).toBe(502);
	expect(html.headers['content-type']).toMatch(/text\/html/);
	expect(html.body.toString()).toMatch(/<html>/);
	const empty = await models();
	expect(empty.status).toBe(200);
	expect(empty.body.length).toBe(0);
});

it("'delay' waits, then handles normally; 'hang' never answers", async () => {
	await mock.setFaults([
		{ path: '^/v1/models$', kind: 'delay', delayMs: 300 },
		{ path: '^/v1/tasks/vendor$', kind: 'hang' },
	]);
	const started = Date.now();
	expect((await models()).status).toBe(200);
	expect(Date.now() - started).toBeGreaterThanOrEqual(290);
	const hung = await rawRequest(`${mock.url}/v1/tasks/vendor`, {
		headers: auth(),
		body: { model: 'gk_video', prompt: 'x' },
		timeoutMs: 200,
	});
	expect(hung.error).toBe('TIMEOUT');
	expect(await mock.submissions()).toBe(0);
});

it("'cut-mid-body' sends part of a download, then drops it", async () => {
	const created = JSON.parse((await submit()).body.toString());
	await mock.setFaults([{ path: '/content$', kind: 'cut-mid-body', afterBytes: 1000 }]);
	const res = await rawRequest(`${mock.url}/v1/tasks/${created.task_id}/artifacts/video/content`, { headers: auth() });
	expect(res.status).toBe(200);
	expect(res.error).toMatch(SOCKET_ERRORS);
	expect(res.body.length).toBe(1000);
	expect(Number(res.headers['content-length'])).toBe(256 * 1024);
});

it("'sse-cut' sends a few deltas of a stream and drops it before [DONE]", async () => {
	await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'sse-cut' }]);
	const res = await rawRequest(`${mock.url}/v1/chat/completions`, {
		headers: auth(),
		body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four five' }] },
	});
	expect(res.status).toBe(200);
	expect(res.error).toMatch(SOCKET_ERRORS);
	const text = res.body.toString();
	expect(text).toMatch(/^data: \{/);
	expect(text).toContain('chat.completion.chunk');
	expect(text).not.toContain('[DONE]');
	expect((await mock.log())[0].outcome).toBe('sse-cut');
});

it('rejects invalid fault rules and never applies faults to the admin API', async () => {
	await expect(mock.setFaults([{ path: '(', kind: 'status' }])).rejects.toThrow(/path: must be a valid regex/);
	await expect(mock.setFaults([{ path: 'x', kind: 'explode' as never }])).rejects.toThrow(/kind/);
	await mock.setFaults([{ path: '.*', kind: 'cut-before', times: -1 }]);
	expect(await mock.log()).toEqual([]);
	expect((await models()).error).toMatch(SOCKET_ERRORS);
});
