import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams as generate } from '../support/faultTable';
import { RATE_LIMITED_CREDENTIAL } from '../support/pacing';
import { findSecret, requestLines, runVideo, sha256 } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-reliab-1a2b3c' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const TASK_PATH = '^/v1/tasks/task_[^/]+$';

describe('Video: never pay twice, recover from transient faults', () => {
	it('retries 503 during polling with backoff and succeeds', async () => {
		await mock.setFaults([{ method: 'GET', path: TASK_PATH, kind: 'status', status: 503, times: 2 }]);
		const result = await runVideo(mock, generate('[[runMs=300]] flaky polls'));
		try {
			expect(result.error).toBeUndefined();
			const statuses = (await mock.log()).filter((e) => new RegExp(TASK_PATH).test(e.path)).map((e) => e.status);
			expect(statuses.slice(0, 2)).toEqual([503, 503]);
			expect(statuses).toContain(200);
			expect(await mock.submissions()).toBe(1);
		} finally {
			await result.cleanup();
		}
	});

	it('429 with Retry-After on the submission: waits as told, then exactly one task', async () => {
		await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'status', status: 429, retryAfter: 1, times: 1 }]);
		// A credential of its own: the pace the 429 teaches is the credential's, and would slow the next tests' runs.
		const result = await runVideo(mock, generate('[[instant]] rate limited'), { credentials: RATE_LIMITED_CREDENTIAL });
		try {
			expect(result.error).toBeUndefined();
			const posts = (await mock.log()).filter((e) => e.method === 'POST');
			expect(posts.map((e) => e.status)).toEqual([429, 200]);
			expect(Date.parse(posts[1].time) - Date.parse(posts[0].time)).toBeGreaterThanOrEqual(950);
			expect(await mock.submissions()).toBe(1);
		} finally {
			await result.cleanup();
		}
	});

	it('a submission whose answer is lost is not resubmitted, and the error says the outcome is unknown', async () => {
		await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'cut-after-accept' }]);
		const result = await runVideo(mock, generate('[[instant]] lost answer'));
		const error = result.nodeError('Video') as Error & { description?: string };
		expect(error.message).toMatch(/outcome of POST \/v1\/tasks\/vendor is unknown/);
		expect(error.message).toMatch(/may have accepted it/);
		expect(error.description).toMatch(/Before submitting again/);
		expect(await mock.submissions()).toBe(1);
		expect((await requestLines(mock)).filter((l) => l.startsWith('POST'))).toHaveLength(1);
		expect(findSecret(mock.apiKey, error, result.logs)).toEqual([]);
	});

	it('Retry On Fail after a lost answer: 3 tries, still exactly one submission', async () => {
		await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'cut-after-accept' }]);
		const result = await runVideo(mock, generate('[[instant]] lost answer, retried'), {
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 1,
		});
		expect(result.tries('Video')).toBe(3);
		expect(result.nodeError('Video')!.message).toMatch(/unknown/);
		expect(await mock.submissions()).toBe(1);
	});

	it('Retry On Fail with Continue On Fail (n8n retries error items too): still exactly one submission', async () => {
		await mock.setFaults([{ method: 'POST', path: '^/v1/tasks/vendor$', kind: 'cut-after-accept' }]);
		const result = await runVideo(mock, generate('[[instant]] lost answer, continue and retry'), {
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 1,
			continueOnFail: true,
		});
		expect(result.tries('Video')).toBe(3);
		expect(result.output()[0].json.error).toMatch(/unknown/);
		expect(await mock.submissions()).toBe(1);
	});

	it('Retry On Fail after a failure past acceptance resumes the same task instead of paying again', async () => {
		// The artifact list fails once with a non-retryable status: the first try fails after the task was accepted.
		await mock.setFaults([{ method: 'GET', path: '/artifacts$', kind: 'status', status: 500, times: 1 }]);
		const result = await runVideo(mock, generate('[[instant]] retry resumes'), {
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 1,
		});
		try {
			expect(result.error).toBeUndefined();
			expect(result.tries('Video')).toBe(2);
			const [item] = result.output();
			expect(item.json).toMatchObject({ status: 'SUCCESS', resumed: true });
			expect(await mock.submissions()).toBe(1);
			expect(sha256(await result.readBinary(item))).toBe(await mock.artifactSha256(item.json.task_id as string));
		} finally {
			await result.cleanup();
		}
	});

	it('an invalid item sends no request at all and names field, model and what is allowed', async () => {
		const result = await runVideo(mock, generate('x', { model: 'sd_2.0_fast_special', resolution: '1080p' }));
		expect(result.nodeError('Video')!.message).toBe(
			'Invalid video request: resolution: "1080p" is not allowed; allowed: 720p (model sd_2.0_fast_special)',
		);
		expect(await mock.log()).toEqual([]);
	});

	it('with several items, one invalid item stops the run before anything is paid', async () => {
		const result = await runVideo(
			mock,
			generate('={{ $json.prompt }}', { duration: '={{ $json.duration }}' }),
			{ input: [{ prompt: 'fine', duration: 5 }, { prompt: 'too long', duration: 99 }] },
		);
		expect(result.nodeError('Video')!.message).toContain('duration: 99 is not allowed; allowed: 5–15 seconds');
		expect(await mock.log()).toEqual([]);
	});

	it('with Continue On Fail, only the invalid item becomes an error item; the others are generated', async () => {
		const result = await runVideo(
			mock,
			generate('={{ $json.prompt }}', { duration: '={{ $json.duration }}' }),
			{ input: [{ prompt: '[[instant]] ok', duration: 5 }, { prompt: 'bad', duration: 99 }], continueOnFail: true },
		);
		try {
			const items = result.output();
			expect(items).toHaveLength(2);
			expect(items[0].json.status).toBe('SUCCESS');
			expect(items[1].json.error).toContain('duration: 99');
			expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
			expect(await mock.submissions()).toBe(1);
		} finally {
			await result.cleanup();
		}
	});

	it('20 items of about 3 s each finish in about one task time, in input order', async () => {
		const input = Array.from({ length: 20 }, (_, i) => ({ prompt: `[[queuedMs=0]] [[runMs=3000]] [[size=4k]] item ${i}` }));
		const started = Date.now();
		const result = await runVideo(mock, generate('={{ $json.prompt }}'), { input });
		const elapsed = Date.now() - started;
		try {
			expect(result.error).toBeUndefined();
			const items = result.output();
			expect(items.map((i) => (i.json.request as { prompt: string }).prompt)).toEqual(input.map((i) => i.prompt));
			expect(items.map((i) => i.pairedItem)).toEqual(input.map((_, item) => ({ item })));
			expect(await mock.submissions()).toBe(20);
			// Serially this would take 20 × 3 s; allow one task plus poll intervals and overhead.
			expect(elapsed).toBeLessThan(9000);
		} finally {
			await result.cleanup();
		}
	});

	it('cancelling the execution while waiting stops polling within one interval', async () => {
		const controller = new AbortController();
		const running = runVideo(mock, generate('[[never]] cancelled', { options: { pollInterval: 1 } }), {
			signal: controller.signal,
		});
		await new Promise((r) => setTimeout(r, 2500));
		controller.abort();
		await running;
		const countAfterCancel = (await mock.log()).length;
		await new Promise((r) => setTimeout(r, 2500));
		expect((await mock.log()).length).toBe(countAfterCancel);
		expect(await mock.submissions()).toBe(1);
	});

	it('a key without video permission gets the service message and the permissions hint', async () => {
		const limited = await spawnMockProcess({ apiKey: 'main-key-xyz', secondaryKeys: { 'image-only-key-123': { video: false } } });
		try {
			const result = await runVideo({ ...limited, apiKey: 'image-only-key-123' }, generate('[[instant]] no rights'));
			const error = result.nodeError('Video') as Error & { description?: string; httpCode?: string };
			expect(error.message).toMatch(/failed with 403: /);
			expect(error.description).toMatch(/Check the API key's permissions/);
			expect(findSecret('image-only-key-123', error, result.logs)).toEqual([]);
		} finally {
			await limited.stop();
		}
	});
});
