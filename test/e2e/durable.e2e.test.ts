// The durable wait of examples/video-long-task-durable-wait.json in a real n8n (2.41.1 by default; 1.123.81 with
// GEN_GATEWAY_E2E_N8N=1), served by `n8n start`: Generate without waiting → n8n's Wait node (150 s here, the
// example's 70 s in the other files: the execution is stored in n8n's database as `waiting`) → Check, Still Running looped back to the Wait node. n8n is killed with
// SIGKILL while three such executions wait, started again on the same home, and each ends as it must: the long task
// with the exact mp4, the failing one with its fail_reason at the first check, the endless one at its Max Wait. The
// mock runs as its own process, so the tasks go on while n8n is down.
//
// The example's Manual Trigger is swapped for a production Webhook (answering at once; lib/durableWorkflow.ts), so
// that the runs are ordinary production executions started over HTTP.
// Time: about 240 s (2.41.1), nearly all of it idle: the long task runs 200 s, so it takes two rounds of the Wait:
// 150 s, then 70 s (the example's; any later round only has to be parked, over n8n's 65 s). The test sequencer starts
// it first, so other files run beside the wait.
//
// n8n is started again at once after the kill, and must be: n8n logs no end event for a parked execution, so its
// start-up crash recovery rewrites every parked execution (`crashed`, then back to `waiting`), and a Wait that ends
// while that happens can leave its execution `crashed` for good (n8n's race between that recovery and its wait
// tracker; support/eventLog.ts). The restart has the rest of the first Wait: 150 s, not the example's 70, because a
// start of n8n took up to 89 s on a CI machine running four jest workers (with 70 s, CI once met the race: the
// endless execution ended `crashed`). The test prints how much of the Wait was left when recovery ended, and names the
// race if an execution ends `crashed`.
import { spawnMockProcess, type MockClient } from '../mock/process';
import type { LogEntry } from '../mock/types';
import { durableWebhookWorkflow } from './workflows/durableWorkflow';
import { exampleCredential, type ExampleWorkflow } from './workflows/examples';
import { readExecution, waitForExecutions, waitForWebhook, type ExecutionSummary } from './workflows/executions';
import { SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import { createN8nHome, FRESH_CONNECTION, randomId, type N8nHome, type N8nServer } from './n8n';
import { describeRestart, executionsToRecover, watchStartupRecovery } from './support/eventLog';
import { killGroup } from './support/process';

const WEBHOOK_PATH = 'durable-video';
const MP4_FTYP = Buffer.from('ftyp');
const FAIL_REASON = 'content policy: the prompt was rejected';
/**
 * The three tasks: one of 200 s (two round trips through the Wait node), one failing at 20 s, one that never ends.
 * The long task's temporary video URL lives 15 minutes (the mock's default is 60 s; the service does not say): a
 * durable wait checks about every Wait, so it may fetch the video that long after SUCCESS (README, Long tasks).
 */
const WAIT_SECONDS = 150;
/** The Wait's later rounds: the example's 70 s, still parked in the database (n8n parks a Wait over 65 s). */
const LATER_WAIT_SECONDS = 70;
const PROMPTS = {
	long: 'A lighthouse through a day and a night [[queuedMs=0]] [[runMs=200000]] [[ttlMs=900000]]',
	failing: `A storm at sea [[runMs=20000]] [[fail=${FAIL_REASON}]]`,
	endless: 'A clock that never stops [[never]]',
};
const FINISHED = ['success', 'error', 'crashed', 'canceled'];

const statusChecks = (log: LogEntry[], taskId: string) =>
	log.filter((entry) => entry.method === 'GET' && entry.path.split('?')[0] === `/v1/tasks/${taskId}`);

describe('durable wait in a real n8n: Generate → Wait → Check, across a SIGKILL of n8n', () => {
	const apiKey = `sk-e2e-durable-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer | undefined;
	let workflow: ExampleWorkflow;

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true });
		workflow = durableWebhookWorkflow({
			id: 'ggDurableE2e0001',
			webhookPath: WEBHOOK_PATH,
			waitSeconds: WAIT_SECONDS,
			laterWaitSeconds: LATER_WAIT_SECONDS,
		});
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	it(
		'killed while waiting and started again: the long task ends with the exact mp4 from one submission, FAILURE with its fail_reason, the endless task at Max Wait (n8n1-smoke)',
		async () => {
			server = await home.startServer();
			let cookie = await server.ownerSession();
			// Imported and activated through the server's REST API as the editor does (n8n 1.x gives the workflow an id
			// of its own: the test goes on with n8n's).
			await server.importCredential(exampleCredential(mock.url, apiKey));
			workflow.id = await server.importWorkflow(workflow);
			await server.activateWorkflows([workflow.id]);
			await waitForWebhook(server, WEBHOOK_PATH);
			for (const prompt of Object.values(PROMPTS)) {
				const response = await fetch(`${server.url}/webhook/${WEBHOOK_PATH}`, {
					method: 'POST',
					headers: { ...FRESH_CONNECTION, 'content-type': 'application/json' },
					body: JSON.stringify({ prompt }),
				});
				expect(response.status).toBe(200);
			}

			// All three are parked in n8n's database, not running in any process.
			const parked = await waitForExecutions(
				server,
				cookie,
				workflow.id,
				(executions) => executions.length === 3 && executions.every((execution) => execution.status === 'waiting'),
				60_000,
			);
			expect(parked).toHaveLength(3);

			// SIGKILL: no shutdown of any kind (the task runner is in the same process group).
			const killedAt = Date.now();
			const old = server;
			const closed = new Promise<void>((resolve) => old.process.once('close', () => resolve()));
			killGroup(old.process, 'SIGKILL');
			await closed;
			server = undefined;
			// What the killed n8n's event log hands its next start's crash recovery: the parked executions (no end event).
			const toRecover = executionsToRecover(home.n8nFolder);

			// Started again at once (no pause: a Wait ending during the restart meets n8n's recovery, see the header).
			const recovered = watchStartupRecovery(() => home.logs(), 120_000);
			server = await home.startServer();
			cookie = await server.login();
			const restart = describeRestart(toRecover.length > 0 ? await recovered : undefined, parked, killedAt);
			process.stderr.write(`durable.e2e: event log at the kill: ${toRecover.join(', ') || 'nothing'} unfinished; ${restart}\n`);
			const submissions = submissionsIn(await mock.log());
			expect(submissions).toHaveLength(3);

			const finished = await waitForExecutions(
				server,
				cookie,
				workflow.id,
				(executions) => executions.length >= 3 && executions.every((execution) => FINISHED.includes(execution.status)),
				9 * 60_000,
			);
			// No execution was added or run again: still the three started over the webhook.
			expect(finished).toHaveLength(3);
			const crashed = finished.filter((execution) => execution.status === 'crashed').map((execution) => execution.id);
			if (crashed.length > 0) throw new Error(`execution(s) ${crashed.join(', ')} ended crashed; ${restart}`);

			const log = await mock.log();
			// One paid submission per execution, all before the kill.
			expect(submissionsIn(log)).toHaveLength(3);

			const runs = new Map<string, { summary: ExecutionSummary; data: any; taskId: string }>(); // eslint-disable-line @typescript-eslint/no-explicit-any
			for (const summary of finished) {
				const { data } = await readExecution(server, cookie, summary.id);
				const [submitted] = data.resultData.runData['Submit Video'][0].data.main[0];
				const entry = Object.entries(PROMPTS).find(([, prompt]) => prompt === submitted.json.request.prompt)!;
				runs.set(entry[0], { summary, data, taskId: submitted.json.task_id });
			}
			expect([...runs.keys()].sort()).toEqual(['endless', 'failing', 'long']);
			for (const { taskId } of runs.values()) {
				const checks = statusChecks(log, taskId);
				expect(checks.length).toBeGreaterThan(0);
				// Nobody polled while n8n was down or before: the first status check came from the restarted n8n's resume.
				expect(Date.parse(checks[0].time)).toBeGreaterThan(killedAt);
				// Between two checks lies a Wait, never an in-process poll interval.
				for (let i = 1; i < checks.length; i++) {
					expect(Date.parse(checks[i].time) - Date.parse(checks[i - 1].time)).toBeGreaterThanOrEqual((LATER_WAIT_SECONDS - 10) * 1000);
				}
			}

			// The long task: Still Running at least once, then Done with the mock's mp4, byte for byte.
			const long = runs.get('long')!;
			expect({ status: long.summary.status, error: long.data.resultData.error?.message }).toEqual({ status: 'success', error: undefined });
			const checkRuns = long.data.resultData.runData['Check Video'] as Array<{ data: { main: Array<Array<{ json: any; binary?: any }> | null> } }>; // eslint-disable-line @typescript-eslint/no-explicit-any
			expect(checkRuns.length).toBeGreaterThanOrEqual(2);
			const stillRunning = checkRuns[0].data.main[1] ?? [];
			expect(stillRunning).toHaveLength(1);
			expect(['QUEUED', 'IN_PROGRESS']).toContain(stillRunning[0].json.status);
			const done = checkRuns[checkRuns.length - 1].data.main[0] ?? [];
			expect(done).toHaveLength(1);
			expect(done[0].json).toMatchObject({ task_id: long.taskId, status: 'SUCCESS', model: 'sd_2.0_fast_discount' });
			expect(done[0].json.waited_seconds).toBeGreaterThanOrEqual(190);
			expect(done[0].binary.data).toMatchObject({ mimeType: 'video/mp4', fileName: `${long.taskId}.mp4` });
			const bytes = await home.binaryFile(done[0].binary.data.id);
			expect(bytes.subarray(4, 8)).toEqual(MP4_FTYP);
			expect(sha256(bytes)).toBe(await mock.artifactSha256(long.taskId));
			expect(statusChecks(log, long.taskId).length).toBe(checkRuns.length);

			// FAILURE (at 20 s): the first check after the Wait ends the execution with fail_reason, no second round.
			const failing = runs.get('failing')!;
			expect(failing.summary.status).toBe('error');
			expect(Object.keys(failing.data.resultData.runData)).toContain('Check Video');
			expect(failing.data.resultData.error.message).toBe(`Video task ${failing.taskId} failed: ${FAIL_REASON}`);
			expect(statusChecks(log, failing.taskId)).toHaveLength(1);
			expect(log.filter((entry) => entry.path.startsWith(`/v1/tasks/${failing.taskId}/artifacts`))).toEqual([]);

			// Never ends: Max Wait (1.5 min from submitted_at) holds across resumes; the error says how to resume.
			const endless = runs.get('endless')!;
			expect(endless.summary.status).toBe('error');
			expect(endless.data.resultData.error.message).toMatch(
				new RegExp(`^Video task ${endless.taskId} did not finish within 1\\.5 minute\\(s\\) \\(last status (QUEUED|IN_PROGRESS)`),
			);
			expect(statusChecks(log, endless.taskId).length).toBeGreaterThanOrEqual(1);

			expect(home.findSecret(apiKey)).toEqual([]);
		},
		15 * 60_000,
	);
});
