// Scale-out on n8n's own distributed engine (queue mode): Redis and PostgreSQL from Debian's packages on loopback,
// one n8n main and one n8n worker (1.123.81) with separate homes. A production Webhook runs Gen Gateway Video
// (generate, wait, download) on the worker and answers with the mp4 itself, which the main reads back from the
// database (binary data mode `database`; docs/queue-mode.md says why).
import { createHash } from 'crypto';

import { spawnMockProcess, type MockClient } from '../mock/process';
import { randomId } from './n8n';
import { startQueueCluster, type QueueCluster, type WebhookAnswer } from './queue/cluster';

const SETUP_TIMEOUT = 20 * 60_000; // a first run may install n8n and Debian packages; later set-ups take ~1-2 min
const CALL_TIMEOUT = 4 * 60_000; // two busy cores: generous

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('Gen Gateway Video in n8n queue mode (main + worker, Redis, PostgreSQL)', () => {
	const apiKey = `sk-e2e-queue-${randomId(24)}`;
	const runId = randomId(6);
	let mock: MockClient;
	let cluster: QueueCluster;

	/** The task the mock created for a prompt (every call sends its own prompt). */
	async function taskForPrompt(prompt: string): Promise<string> {
		const submissions = (await mock.log()).filter(
			(entry) => entry.method === 'POST' && entry.path === '/v1/tasks/vendor' && (entry.body as { prompt?: string })?.prompt === prompt,
		);
		expect(submissions).toHaveLength(1);
		return submissions[0].taskId!;
	}

	/** The answer is the task's mp4, byte for byte. */
	async function expectVideoOf(answer: WebhookAnswer, prompt: string, bytes: number): Promise<string> {
		expect({ status: answer.status, contentType: answer.contentType }).toEqual({ status: 200, contentType: 'video/mp4' });
		const taskId = await taskForPrompt(prompt);
		expect(answer.body.length).toBe(bytes);
		expect(sha256(answer.body)).toBe(await mock.artifactSha256(taskId));
		return taskId;
	}

	/** Every execution the main enqueued was started by the worker, and the node's own progress lines are only there. */
	function expectRanOnWorker(taskIds: string[]): void {
		const enqueued = cluster.enqueuedByMain();
		expect(enqueued.length).toBeGreaterThan(0);
		expect([...cluster.startedByWorker()].sort()).toEqual([...enqueued].sort());
		const workerLog = cluster.worker.output();
		const mainLog = cluster.mainHome.logs();
		for (const taskId of taskIds) {
			expect(workerLog).toContain(`Gen Gateway Video: task ${taskId} SUCCESS`);
			expect(mainLog).not.toContain(`Gen Gateway Video: task ${taskId}`);
		}
	}

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		cluster = await startQueueCluster({ baseUrl: mock.url, apiKey });
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await cluster?.stop();
		await mock?.stop();
	}, 2 * 60_000);

	it(
		'a webhook call is executed by the worker and answers with the mp4 bytes',
		async () => {
			await mock.reset();
			const prompt = `queue single ${runId} [[runMs=1000]] [[size=700k]]`;
			const answer = await cluster.callWebhook({ prompt });
			const taskId = await expectVideoOf(answer, prompt, 700 * 1024);
			expect(await mock.submissions()).toBe(1);
			expectRanOnWorker([taskId]);
		},
		CALL_TIMEOUT,
	);

	it(
		'10 concurrent webhook calls: 10 tasks at the service, each caller gets its own mp4',
		async () => {
			await mock.reset();
			const startedBefore = cluster.startedByWorker().length;
			// A different size per call: a caller given another caller's video would fail on length and hash.
			const calls = Array.from({ length: 10 }, (_, i) => ({
				prompt: `queue burst ${i} ${runId} [[runMs=1000]] [[size=${256 + 16 * i}k]]`,
				bytes: (256 + 16 * i) * 1024,
			}));
			const answers = await Promise.all(calls.map((call) => cluster.callWebhook({ prompt: call.prompt })));
			const taskIds: string[] = [];
			for (const [i, call] of calls.entries()) taskIds.push(await expectVideoOf(answers[i], call.prompt, call.bytes));
			expect(await mock.submissions()).toBe(10);
			expect(new Set(taskIds).size).toBe(10);
			expectRanOnWorker(taskIds);
			expect(cluster.startedByWorker()).toHaveLength(startedBefore + 10);
		},
		CALL_TIMEOUT,
	);

	it(
		'the binaries crossed from worker to main through the database, not a shared folder',
		async () => {
			// One stored mp4 per execution so far, none on either home's disk.
			const rows = await cluster.postgres.query(`select count(*), count(distinct "sourceId") from binary_data where "mimeType" = 'video/mp4'`);
			const executions = cluster.startedByWorker().length;
			expect(executions).toBeGreaterThan(0);
			expect(rows).toBe(`${executions}|${executions}`);
			expect(cluster.binaryFilesOnDisk(cluster.mainHome)).toEqual([]);
			expect(cluster.binaryFilesOnDisk(cluster.workerHome)).toEqual([]);
		},
		CALL_TIMEOUT,
	);

	it('the API key is in no output or file of the main or the worker', () => {
		expect(cluster.mainHome.findSecret(apiKey)).toEqual([]);
		expect(cluster.workerHome.findSecret(apiKey)).toEqual([]);
	});
});
