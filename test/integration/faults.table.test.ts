/**
 * The reliability table of the issue, one `it` per row, through the real nodes and n8n-core's engine against the mock
 * service's fault knobs. Each row asserts what the user gets (output, error message and description) and what the
 * service saw (the mock's request log). Sibling suites: video.reliability / video.lifecycle (single behaviours),
 * faults.fuzz, secrets, proxy.
 */
import { DEFAULT_RETRY_POLICY } from '../../nodes/shared/transport/retry';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import type { FaultRule } from '../mock/types';
import {
	describeError,
	entriesOf,
	gapsMs,
	generateParams as generate,
	pause,
	PATHS,
	runModels,
	runStreamedChat,
	taskIdIn,
} from '../support/faultTable';
import type { Endpoint } from '../support/faultTable';
import { RATE_LIMITED_CREDENTIAL } from '../support/pacing';
import { FAST, findSecret, requestLines, runVideo, sha256 } from '../support/videoRun';

const API_KEY = 'sentinel-key-faults-7d6c5b4a';
const NO_VIDEO_KEY = 'sentinel-key-novideo-3e2d1c';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: API_KEY, secondaryKeys: { [NO_VIDEO_KEY]: { video: false } } });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const rule = (endpoint: Endpoint, fields: Omit<FaultRule, 'path'>): FaultRule => ({ path: PATHS[endpoint], ...fields });
const RESUME_HINT = (taskId: string) => `"Wait for Completion" and Task ID ${taskId}`;

/** Neither key appears in anything the user or the logs get. */
function expectNoKey(...things: unknown[]): void {
	expect(findSecret(API_KEY, ...things)).toEqual([]);
	expect(findSecret(NO_VIDEO_KEY, ...things)).toEqual([]);
}

describe('fault table', () => {
	it('429 bursts with Retry-After on every endpoint: success after backoff; waits honour Retry-After; submission count 1', async () => {
		const video: Endpoint[] = ['submit', 'poll', 'artifacts', 'content'];
		await mock.setFaults(
			[...video, 'models' as const].map((endpoint) => rule(endpoint, { kind: 'status', status: 429, retryAfter: 1, times: 2 })),
		);
		// A credential of its own: the pace these 429s teach is the credential's, and would slow the next rows' runs.
		const models = await runModels(mock, {}, { credentials: RATE_LIMITED_CREDENTIAL });
		const result = await runVideo(mock, generate('[[instant]] rate limited everywhere'), { credentials: RATE_LIMITED_CREDENTIAL });
		try {
			expect(models.error).toBeUndefined();
			expect(models.output().length).toBeGreaterThan(11);
			expect(result.error).toBeUndefined();
			const [item] = result.output();
			expect(item.json.status).toBe('SUCCESS');
			expect(sha256(await result.readBinary(item))).toBe(await mock.artifactSha256(item.json.task_id as string));

			const log = await mock.log();
			const gaps: number[] = [];
			for (const endpoint of [...video, 'models' as const]) {
				const entries = entriesOf(log, endpoint);
				expect({ endpoint, statuses: entries.map((e) => e.status) }).toEqual({ endpoint, statuses: [429, 429, 200] });
				gaps.push(...gapsMs(entries));
			}
			// Backoff alone would wait at most 500 ms before the 2nd attempt: ≥ 1 s is the server's Retry-After.
			for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
			// Waited once, not twice: a second wait on top of Retry-After would put every gap at ≥ 2 s. Bounded on the
			// shortest of the 10 gaps, because a loaded CI machine once stretched a single gap to 2054 ms.
			expect(Math.min(...gaps)).toBeLessThan(1900);
			// The node's own account: every retry waited exactly the 1000 ms the service asked for.
			const retries = [...models.logs, ...result.logs].filter((line) => /answered 429; retry \d in \d+ ms/.test(line));
			expect(retries).toHaveLength(10);
			expect(retries.every((line) => line.endsWith('in 1000 ms'))).toBe(true);
			expect(await mock.submissions()).toBe(1);
			expectNoKey(result.run, result.logs, models.run, models.logs);
		} finally {
			await result.cleanup();
		}
	});

	it('502/503 on polls and on the download: success after backoff; bounded attempts; clear error when they run out', async () => {
		// Recovers: two 503s on the status poll and two 502s on the download, then success.
		await mock.setFaults([
			rule('poll', { kind: 'status', status: 503, times: 2 }),
			rule('content', { kind: 'status', status: 502, times: 2 }),
		]);
		const ok = await runVideo(mock, generate('[[instant]] flaky upstream'));
		try {
			expect(ok.error).toBeUndefined();
			const [item] = ok.output();
			expect(sha256(await ok.readBinary(item))).toBe(await mock.artifactSha256(item.json.task_id as string));
			const log = await mock.log();
			expect(entriesOf(log, 'poll').map((e) => e.status)).toEqual([503, 503, 200]);
			expect(entriesOf(log, 'content').map((e) => e.status)).toEqual([502, 502, 200]);
			for (const gap of [...gapsMs(entriesOf(log, 'poll')), ...gapsMs(entriesOf(log, 'content'))]) {
				expect(gap).toBeGreaterThanOrEqual(240); // half of the first 500 ms step, the shortest jittered wait
			}
			expect(await mock.submissions()).toBe(1);
		} finally {
			await ok.cleanup();
		}

		// Runs out: the download answers 503 for good. The default policy stops after its attempts, with a clear error.
		await mock.reset();
		await mock.setFaults([rule('content', { kind: 'status', status: 503, times: -1 })]);
		const started = Date.now();
		const failed = await runVideo(mock, generate('[[instant]] download down for good'));
		const elapsed = Date.now() - started;
		const error = describeError(failed.nodeError('Video'));
		const taskId = taskIdIn(error.message);
		expect(error.message).toBe(
			`Could not download artifact "video" of task ${taskId}: GET /v1/tasks/${taskId}/artifacts/video/content failed with 503: injected fault: HTTP 503`,
		);
		expect(error.description).toContain(`Tried ${DEFAULT_RETRY_POLICY.maxAttempts} times.`);
		expect(error.description).toMatch(/try again later/);
		const attempts = entriesOf(await mock.log(), 'content');
		expect(attempts).toHaveLength(DEFAULT_RETRY_POLICY.maxAttempts);
		// Exponential backoff: each wait at least half its doubling step (0.25, 0.5, 1, 2, 4 s).
		gapsMs(attempts).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(250 * 2 ** i - 10));
		expect(elapsed).toBeLessThan(DEFAULT_RETRY_POLICY.maxTotalMs);
		expect(await mock.submissions()).toBe(1);

		// A poll the service refuses for longer than the longest allowed wait (Retry-After 60 s > 30 s) fails at once,
		// naming the task and how to resume it: the task was paid for and must not be generated again.
		await mock.reset();
		await mock.setFaults([rule('poll', { kind: 'status', status: 503, retryAfter: 60, times: -1 })]);
		const lost = await runVideo(mock, generate('[[instant]] status unavailable'));
		const lostError = describeError(lost.nodeError('Video'));
		const lostTask = taskIdIn(lostError.message);
		expect(lostError.message).toBe(
			`Could not check the status of video task ${lostTask}: GET /v1/tasks/${lostTask} failed with 503: injected fault: HTTP 503`,
		);
		expect(lostError.description).toContain(RESUME_HINT(lostTask));
		expect(lostError.description).toMatch(/not resubmitted/);
		expect(entriesOf(await mock.log(), 'poll')).toHaveLength(1);
		expect(await mock.submissions()).toBe(1);
		expectNoKey(failed.run, failed.logs, lost.run, lost.logs);
	}, 60_000);

	it('submission accepted, connection cut before the answer: no resubmission; error says the outcome is unknown', async () => {
		await mock.setFaults([rule('submit', { method: 'POST', kind: 'cut-after-accept' })]);
		const result = await runVideo(mock, generate('[[instant]] answer lost'));
		const error = describeError(result.nodeError('Video'));
		expect(error.message).toMatch(/^The outcome of POST \/v1\/tasks\/vendor is unknown: the connection failed \(\w+\) after the request was sent\./);
		expect(error.message).toMatch(/may have accepted it \(and may charge for it\), so it was not resubmitted/);
		expect(error.description).toMatch(/^Before submitting again, check with the service whether a task was created/);
		expect(await mock.submissions()).toBe(1);
		expect(await requestLines(mock)).toEqual(['POST /v1/tasks/vendor']);

		// A gateway timing out (504) is the same situation: the service may have the request, so it is never resent.
		await mock.reset();
		await mock.setFaults([rule('submit', { method: 'POST', kind: 'status', status: 504 })]);
		const timedOut = await runVideo(mock, generate('[[instant]] gateway timeout'));
		const timeoutError = describeError(timedOut.nodeError('Video'));
		expect(timeoutError.message).toMatch(/^The outcome of POST \/v1\/tasks\/vendor is unknown: .*504/);
		expect(timeoutError.message).toMatch(/so it was not resubmitted/);
		expect(await requestLines(mock)).toEqual(['POST /v1/tasks/vendor']);
		expectNoKey(result.run, result.logs, timedOut.run, timedOut.logs);
	});

	it('same, with n8n "Retry On Fail" (3 tries): still exactly one submission', async () => {
		await mock.setFaults([rule('submit', { method: 'POST', kind: 'cut-after-accept' })]);
		const result = await runVideo(mock, generate('[[instant]] answer lost, node retried'), {
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 1,
		});
		expect(result.tries('Video')).toBe(3);
		const error = describeError(result.nodeError('Video'));
		// The later tries refuse to send: the first try's outcome is unknown.
		expect(error.message).toMatch(/^Not resubmitted: an earlier try of this item in this execution had an unknown outcome/);
		expect(error.description).toMatch(/pay for the same video twice/);
		expect(await mock.submissions()).toBe(1);
		expect(await requestLines(mock)).toEqual(['POST /v1/tasks/vendor']);
	});

	it('FAILURE with fail_reason: fails at once (no further polls), reason and task_id in the error', async () => {
		const result = await runVideo(mock, generate('[[fail=the prompt was blocked]] [[queuedMs=0]] [[runMs=1500]]'), {
			continueOnFail: true,
		});
		const finishedAt = Date.now();
		const [item] = result.output();
		const taskId = item.json.task_id as string;
		expect(item.json).toMatchObject({
			error: `Video task ${taskId} failed: the prompt was blocked`,
			status: 'FAILURE',
			fail_reason: 'the prompt was blocked',
			task_id: expect.stringMatching(/^task_/),
		});
		expect(item.json.errorDescription).toMatch(/Correct the request .* never resubmitted automatically/);
		const log = await mock.log();
		const polls = entriesOf(log, 'poll');
		// Polled while running (1 s apart), then the FAILURE answer was the last request of all.
		expect(polls.length).toBeGreaterThanOrEqual(2);
		expect(log[log.length - 1]).toBe(polls[polls.length - 1]);
		expect(finishedAt - Date.parse(polls[polls.length - 1].time)).toBeLessThan(FAST.pollInterval * 1000);
		await pause(FAST.pollInterval * 1000 + 200);
		expect((await mock.log()).length).toBe(log.length);
		expect(await mock.submissions()).toBe(1);
	});

	it('task never finishes: stops at maxWait with task_id and how to resume; resume later succeeds', async () => {
		// Takes 5 s, longer than the shortest maxWait (0.05 min = 3 s): the first run gives up, a later one resumes.
		const result = await runVideo(mock, generate('[[queuedMs=0]] [[runMs=5000]] slow', { options: { pollInterval: 1, maxWait: 0.05 } }));
		const error = describeError(result.nodeError('Video'));
		const taskId = taskIdIn(error.message);
		expect(error.message).toMatch(new RegExp(`^Video task ${taskId} did not finish within 0\\.05 minute\\(s\\) \\(last status IN_PROGRESS, \\d+%\\)$`));
		expect(error.description).toContain(RESUME_HINT(taskId));
		expect(error.description).toMatch(/was not resubmitted and may still finish/);
		const polls = entriesOf(await mock.log(), 'poll');
		expect(polls.length).toBeGreaterThanOrEqual(3);
		expect(polls.length).toBeLessThanOrEqual(5);

		const resumed = await runVideo(mock, { operation: 'waitForCompletion', taskId, options: { pollInterval: 1 } });
		try {
			expect(resumed.error).toBeUndefined();
			const [item] = resumed.output();
			expect(item.json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			expect(sha256(await resumed.readBinary(item))).toBe(await mock.artifactSha256(taskId));
			expect(await mock.submissions()).toBe(1);
		} finally {
			await resumed.cleanup();
		}
	});

	it('temporary URL expired at download: clear error naming the task and the artifact', async () => {
		const result = await runVideo(mock, generate('[[instant]] [[ttlMs=1]] expires at once'), { continueOnFail: true });
		const [item] = result.output();
		const taskId = item.json.task_id as string;
		expect(item.json.error).toMatch(
			new RegExp(`^Could not download artifact "video" of task ${taskId}: GET \\S+/content failed with 410: the temporary video URL expired`),
		);
		expect(item.json.errorDescription).toMatch(/temporary URL behind the video may have expired/);
		expect(item.json.errorDescription).toMatch(/must be generated again/);
		expect(item.json).toMatchObject({ status: 'SUCCESS', model: 'sd_2.0_fast_discount' });
		expect(item.binary).toBeUndefined();
		// 410 is final: asked once, not retried.
		expect(entriesOf(await mock.log(), 'content').map((e) => e.status)).toEqual([410]);
		expect(await mock.submissions()).toBe(1);
	});

	it('SSE stream cut mid-answer (Chat): error marked incomplete, partial text kept under continueOnFail', async () => {
		await mock.setFaults([{ path: '^/v1/chat/completions$', kind: 'sse-cut' }]);
		const result = await runStreamedChat(mock, 'alpha beta gamma delta epsilon', { continueOnFail: true });
		const [item] = result.output();
		expect(item.json.error).toMatch(/^The stream of POST \/v1\/chat\/completions broke before it was complete/);
		expect(item.json.error).toMatch(/the output is incomplete, 11 characters arrived/);
		expect(item.json.error).toMatch(/may not have been cancelled/);
		// The mock sends three events (role, "Echo:", " alpha") before it drops the connection.
		expect(item.json.partialContent).toBe('Echo: alpha');
		expect((await mock.log()).map((e) => [e.method, e.outcome])).toEqual([['POST', 'sse-cut']]);
		expectNoKey(result.run, result.logs);
	});

	it('malformed JSON / HTML error page / empty body from the service: clear error, no crash, no key in the message', async () => {
		const seen: unknown[] = [];
		const runWith = async (faults: FaultRule[], prompt: string) => {
			await mock.reset();
			await mock.setFaults(faults);
			const result = await runVideo(mock, generate(`[[instant]] ${prompt}`));
			seen.push(result.run, result.logs);
			await result.cleanup();
			return { error: describeError(result.nodeError('Video')), result, log: await mock.log() };
		};

		// On the submission, an unreadable 2xx means "accepted, but we cannot follow it": unknown outcome, never resent.
		for (const kind of ['malformed-json', 'empty'] as const) {
			const { error, log } = await runWith([rule('submit', { method: 'POST', kind })], `submit ${kind}`);
			expect(error.message).toMatch(/^The outcome of POST \/v1\/tasks\/vendor is unknown: the service answered 200 but its body could not be read/);
			expect(error.message).toMatch(kind === 'empty' ? /empty body/ : /text that is not JSON/);
			expect(log.map((e) => e.method)).toEqual(['POST']);
		}
		// An HTML 502 page is an explicit refusal (section 7: retry 502 with backoff): retried, one task in the end.
		{
			const { result, log } = await runWith([rule('submit', { method: 'POST', kind: 'html' })], 'submit html');
			expect(result.nodeError('Video')).toBeUndefined();
			expect(entriesOf(log, 'submit').map((e) => e.status)).toEqual([502, 200]);
			expect(await mock.submissions()).toBe(1);
		}

		// On a status poll (a read, after the task was paid): fails clearly at once, naming the task and how to resume.
		for (const [kind, status, pattern] of [
			['malformed-json', 200, /Unreadable answer: The service answered with text that is not JSON/],
			['empty', 200, /Unreadable answer: The service answered with an empty body/],
			['html', 500, /The service answered with an HTML page: "<!DOCTYPE html>.*502 Bad Gateway/],
		] as const) {
			const { error, log } = await runWith([rule('poll', { kind, status, times: -1 })], `poll ${kind}`);
			const taskId = taskIdIn(error.message);
			expect(error.message).toMatch(new RegExp(`^Could not check the status of video task ${taskId}: GET /v1/tasks/${taskId} failed with ${status}: `));
			expect(error.message).toMatch(pattern);
			expect(error.description).toContain(RESUME_HINT(taskId));
			expect(error.description).not.toMatch(/did not accept/);
			expect(entriesOf(log, 'poll')).toHaveLength(1);
			expect(await mock.submissions()).toBe(1);
		}

		// On the download: a 2xx that is JSON, HTML or nothing is not the video; it is never stored as one.
		for (const [kind, pattern] of [
			['malformed-json', /text that is not JSON/],
			['empty', /empty body/],
			['html', /HTML page/],
		] as const) {
			const { error, result, log } = await runWith([rule('content', { kind, status: 200 })], `download ${kind}`);
			const taskId = taskIdIn(error.message);
			expect(error.message).toMatch(new RegExp(`^Could not download artifact "video" of task ${taskId}: GET \\S+/content failed with 200: Not the file: `));
			expect(error.message).toMatch(pattern);
			expect(result.output()).toEqual([]);
			expect(entriesOf(log, 'content')).toHaveLength(1);
		}

		// The model list: the same three shapes give the same clear messages (an HTML 502 after its retries).
		for (const [kind, pattern] of [
			['malformed-json', /failed with 200: Unreadable answer: .*not JSON/],
			['empty', /failed with 200: Unreadable answer: .*empty body/],
			['html', /failed with 500: The service answered with an HTML page/],
		] as const) {
			await mock.reset();
			await mock.setFaults([rule('models', { kind, status: kind === 'html' ? 500 : 200, times: -1 })]);
			const models = await runModels(mock);
			seen.push(models.run, models.logs);
			const error = describeError(models.nodeError('Models'));
			expect(error.message).toMatch(/^GET \/v1\/models failed with /);
			expect(error.message).toMatch(pattern);
			// A 2xx that cannot be read most often means the base URL points at something else than the API.
			expect(error.description).toMatch(kind === 'html' ? /The service failed/ : /base URL/);
		}
		expectNoKey(...seen);
	}, 60_000);

	it('wrong key (403), key without video permission: the service\'s message plus "check the key\'s permissions"', async () => {
		const wrong = await runVideo({ ...mock, apiKey: 'sentinel-key-wrong-000000' }, generate('[[instant]] wrong key'));
		const wrongError = describeError(wrong.nodeError('Video'));
		// The service's own words (its "Bearer <key>" placeholder is masked like any Bearer value would be).
		expect(wrongError.message).toMatch(/^POST \/v1\/tasks\/vendor failed with 403: invalid or missing API key \(send Authorization: Bearer \*\*\*/);
		expect(wrongError.description).toMatch(/^Check the API key's permissions/);
		expect(findSecret('sentinel-key-wrong-000000', wrong.run, wrong.logs)).toEqual([]);

		const models = await runModels(mock, {}, { apiKey: 'sentinel-key-wrong-000000' });
		expect(describeError(models.nodeError('Models')).message).toMatch(/^GET \/v1\/models failed with 403: invalid or missing API key/);
		expect(describeError(models.nodeError('Models')).description).toMatch(/^Check the API key's permissions/);

		const limited = await runVideo({ ...mock, apiKey: NO_VIDEO_KEY }, generate('[[instant]] no video rights'));
		const limitedError = describeError(limited.nodeError('Video'));
		expect(limitedError.message).toBe(
			'POST /v1/tasks/vendor failed with 403: this API key has no permission for video generation',
		);
		expect(limitedError.description).toMatch(/^Check the API key's permissions/);
		// 403 is final: each run asked once (n8n repeats only after a 401), and nothing was created.
		expect((await mock.log()).map((e) => `${e.status} ${e.method} ${e.path}`)).toEqual([
			'403 POST /v1/tasks/vendor',
			'403 GET /v1/models',
			'403 POST /v1/tasks/vendor',
		]);
		expect(await mock.submissions()).toBe(0);
		expectNoKey(wrong.run, wrong.logs, models.run, models.logs, limited.run, limited.logs);
	});

	it('execution cancelled while waiting: polling stops within one interval; no further requests', async () => {
		const controller = new AbortController();
		const running = runVideo(mock, generate('[[never]] cancelled', { options: { pollInterval: 2 } }), {
			signal: controller.signal,
		});
		await pause(3000);
		controller.abort();
		const abortedAt = Date.now();
		const result = await running;
		const stoppedAfter = Date.now() - abortedAt;
		expect(result.run.status).toBe('canceled');
		expect(stoppedAfter).toBeLessThan(2000);
		const log = await mock.log();
		expect(entriesOf(log, 'poll').length).toBeGreaterThanOrEqual(2);
		expect(log.every((entry) => Date.parse(entry.time) <= abortedAt)).toBe(true);
		await pause(2500);
		expect((await mock.log()).length).toBe(log.length);
		expect(await mock.submissions()).toBe(1);
	});
});
