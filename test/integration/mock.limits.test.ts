// Time: ~3 s (one mock process; a rate-limit burst, a duration range, read faults)
/** The mock's service-wide limits (test/mock/limits.ts): 429 + Retry-After per key, task durations, read faults, counters. */
import { keyLabel, parseSecondsRange, RateLimiter } from '../mock/limits';
import { spawnMockProcess, type MockClient } from '../mock/process';
import { rawRequest } from '../mock/rawRequest';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({
		limits: { rateLimit: 5 },
		secondaryKeys: { 'other-key': {} },
	});
});
afterAll(() => mock?.stop());
beforeEach(() => mock.reset());

const models = (key = mock.apiKey) =>
	rawRequest(`${mock.url}/v1/models`, {
		headers: { Authorization: `Bearer ${key}` },
	});
const submit = (prompt = 'x [[instant]]') =>
	rawRequest(`${mock.url}/v1/tasks/vendor`, {
		headers: { Authorization: `Bearer ${mock.apiKey}` },
		body: { model: 'gk_video', prompt },
	});

it('MOCK_RATE_LIMIT: past N requests/s per key, 429 with a whole-second Retry-After and an OpenAI-style body', async () => {
	const answers = await Promise.all(Array.from({ length: 8 }, () => models()));
	// A burst of one second's worth passes (one more token may refill while a loaded machine sends the eight).
	const ok = answers.filter((a) => a.status === 200).length;
	expect(ok).toBeGreaterThanOrEqual(5);
	expect(ok).toBeLessThanOrEqual(6);
	expect(answers.filter((a) => a.status === 429)).toHaveLength(8 - ok);
	const refused = answers.find((a) => a.status === 429)!;
	expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
	const body = JSON.parse(refused.body.toString());
	expect(body.error).toMatchObject({
		code: 'rate_limit_exceeded',
		type: 'requests',
	});
	expect(body.error.message).toMatch(/Rate limit/);
	// Another key has its own budget.
	expect((await models('other-key')).status).toBe(200);
	// A refused request took no token: after Retry-After the key gets through again.
	await new Promise((r) => setTimeout(r, 1000 * Number(refused.headers['retry-after'])));
	expect((await models()).status).toBe(200);
	const stats = await mock.stats();
	expect(stats.keys[keyLabel(mock.apiKey)]).toEqual({
		requests: 9,
		limited: 3,
		submissions: 0,
		readFaults: 0,
	});
	expect(await mock.keyStats('other-key')).toMatchObject({
		requests: 1,
		limited: 0,
	});
	expect((await mock.log()).filter((e) => e.outcome === 'rate-limited')).toHaveLength(8 - ok);
});

it('counts submissions per key; a 429 creates nothing', async () => {
	const answers = await Promise.all(Array.from({ length: 7 }, () => submit()));
	const created = answers.filter((a) => a.status === 200).length;
	expect(created).toBe(5);
	expect(await mock.submissions()).toBe(5);
	expect(await mock.keyStats()).toMatchObject({
		requests: 7,
		limited: 2,
		submissions: 5,
	});
});

it('MOCK_TASK_SECONDS spreads durations over the range; prompt markers still override', async () => {
	await mock.setLimits({ rateLimit: 0, taskSeconds: '2-4' });
	const ids: string[] = [];
	for (let i = 0; i < 6; i++) ids.push(JSON.parse((await submit('x')).body.toString()).task_id);
	const totals = await Promise.all(
		ids.map(async (id) => {
			const { script } = (await mock.task(id)) as {
				script: { queuedMs: number; runMs: number };
			};
			return script.queuedMs + script.runMs;
		}),
	);
	expect(Math.min(...totals)).toBeGreaterThanOrEqual(2000);
	expect(Math.max(...totals)).toBeLessThanOrEqual(4000);
	expect(new Set(totals).size).toBeGreaterThan(1);
	const tagged = JSON.parse((await submit('x [[instant]]')).body.toString()).task_id;
	expect(((await mock.task(tagged)) as { script: { runMs: number } }).script.runMs).toBe(0);
});

it('MOCK_READ_FAULT_RATE answers that share of reads 503 or cut, never a submission', async () => {
	await mock.setLimits({ rateLimit: 0, readFaultRate: 1 });
	// 0 = the connection was dropped before any answer.
	const reads = await Promise.all(Array.from({ length: 6 }, () => models().then((r) => r.status, () => 0)));
	expect(reads.every((s) => s === 0 || s === 503)).toBe(true);
	expect((await submit()).status).toBe(200);
	await mock.setLimits({ readFaultRate: 0.5 });
	const outcomes = await Promise.all(
		Array.from({ length: 40 }, () =>
			models().then(
				(r) => r.status,
				() => 0,
			),
		),
	);
	const faulted = outcomes.filter((s) => s !== 200).length;
	expect(faulted).toBeGreaterThan(5);
	expect(faulted).toBeLessThan(35);
	expect((await mock.keyStats()).readFaults).toBe(faulted + 6);
});

it('limits arithmetic: ranges parse, the bucket refills at the rate', () => {
	expect(parseSecondsRange('50-70')).toEqual([50, 70]);
	expect(parseSecondsRange('1.5')).toEqual([1.5, 1.5]);
	expect(parseSecondsRange('7-3')).toBeUndefined();
	const limiter = new RateLimiter();
	expect(limiter.take('k', 2, 0)).toBeUndefined();
	expect(limiter.take('k', 2, 0)).toBeUndefined();
	expect(limiter.take('k', 2, 0)).toBe(1);
	expect(limiter.take('k', 2, 500)).toBeUndefined();
	expect(limiter.take('k', 0.5, 500)).toBe(2);
});
