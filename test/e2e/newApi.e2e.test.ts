// The main jobs in a real n8n (2.41.1) against the mock speaking as new-api, the gateway the service interface comes
// from (test/mock/README.md, "The new-api personality"; issue 27): every task starts NOT_START and goes SUBMITTED,
// QUEUED, IN_PROGRESS before SUCCESS; statuses are flat, artifacts are [] until SUCCESS, content answers Range, a wrong
// key is 401, streams carry `: PING` and a usage chunk, the model list is new-api's. One n8n home, one `n8n start`
// (the imports over its REST API, and the credential test), one `n8n execute` of a workflow whose branches run every
// job (each node continues on fail, so one broken job shows as its own failure and the others still run).
// Time: about 45 s on a quiet machine, 65-75 s on a busy one: the `n8n execute` takes 22-26 s because its three
// video tasks (3 s, 6 s, 7.5 s of mock time, polled and looped as a user's would be) run one branch after another;
// `n8n start` takes 10-14 s.
import { spawnMockProcess, type MockClient } from '../mock/process';
import type { LogEntry } from '../mock/types';
import { type NodeSettings, type SettingsNodeSpec, videoNode } from './workflows/oneNode';
import { explain, logCursor, RUN_TIMEOUT, SETUP_TIMEOUT, sha256 } from './workflows/runs';
import {
	createN8nHome,
	nodeItems,
	nodeType,
	randomId,
	TRIGGER_NAME,
	type CredentialImport,
	type ExecuteResult,
	type N8nHome,
	type N8nServer,
} from './n8n';
import { GenGatewayApi } from '../../credentials/GenGatewayApi.credentials';

const MP4_FTYP = Buffer.from('ftyp');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Every node keeps going when it fails: its error becomes its item, and the test names the job that broke. */
const ON: NodeSettings = { onError: 'continueRegularOutput' };

/**
 * The tasks (mock markers set their clock): each runs through every new-api status while n8n polls it. Two also carry
 * a provider's own record (`data`, with statuses in its own words: pending, processing…), as some plugins pass on.
 */
const PROMPTS = {
	/** Generate with Wait for Completion, polled every second. */
	wait: 'A lighthouse at dawn [[queuedMs=1500]] [[runMs=1500]] [[providerData]]',
	/** Generate, then Get Status at once (NOT_START for 2 s), List Artifacts while it runs, Wait for Completion… */
	status: 'Paper boats on a rainy street [[queuedMs=6000]] [[runMs=1500]]',
	/** Generate, then the durable loop: Wait 2 s → Check → Still Running back to the Wait. */
	check: 'A clock tower through a day [[queuedMs=3000]] [[runMs=3000]] [[providerData]]',
	/** Sent with a key the service refuses. */
	refused: 'A task nobody pays for',
};
const CHAT = {
	plain: 'Name a cat for a lighthouse keeper',
	streamed: 'Name a dog for a ferry captain',
	refused: 'Name a parrot for a pirate',
};
const IMAGE_PROMPT = 'A red fox in the snow, watercolour';
const PROGRESS: Record<string, RegExp> = {
	NOT_START: /^0%$/,
	SUBMITTED: /^10%$/,
	QUEUED: /^20%$/,
	IN_PROGRESS: /^([3-9]\d)%$/,
	SUCCESS: /^100%$/,
};
const RUNNING = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS'];

/** The credential's message for a refused key (its test rule for 401). */
const RULE_401 = new GenGatewayApi().test.rules!.find((rule) => rule.properties.value === 401)?.properties.message;

type Connections = Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }>;

/**
 * A Manual Trigger feeding several chains, one per job (n8n runs them one after another, top to bottom), plus extra
 * edges `[from, output, to]` (the Check loop).
 */
function branchedWorkflow(name: string, chains: SettingsNodeSpec[][], edges: Array<[string, number, string]>) {
	const trigger = { name: TRIGGER_NAME, type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} };
	const connections: Connections = {};
	const link = (from: string, output: number, to: string) => {
		const main = (connections[from] ??= { main: [] }).main;
		while (main.length <= output) main.push([]);
		main[output].push({ node: to, type: 'main', index: 0 });
	};
	const nodes: Array<Record<string, unknown>> = [{ ...trigger, id: `${randomId(8)}-t`, position: [0, 0] }];
	chains.forEach((chain, row) => {
		chain.forEach((node, column) => {
			nodes.push({
				id: `${randomId(8)}-${row}-${column}`,
				typeVersion: 1,
				parameters: {},
				position: [220 * (column + 1), 200 * row],
				...node,
			});
			link(column === 0 ? TRIGGER_NAME : chain[column - 1].name, 0, node.name);
		});
	});
	for (const [from, output, to] of edges) link(from, output, to);
	return { id: randomId(), name, active: false, settings: { executionOrder: 'v1' }, connections, nodes };
}

describe('the main jobs in a real n8n against the mock speaking as new-api', () => {
	const apiKey = `sk-e2e-newapi-${randomId(24)}`;
	const wrongKey = `sk-e2e-newapi-wrong-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer | undefined;
	let credential: CredentialImport;
	/** The same service with a key it refuses (new-api: 401). */
	let refusedCredential: CredentialImport;
	let workflowId: string;
	let run: ExecuteResult;
	let log: LogEntry[];

	const mainJobs = (ref: CredentialImport, refused: CredentialImport) => {
		const credentials = { genGatewayApi: { id: ref.id, name: ref.name } };
		const rl = (value: string) => ({ __rl: true, mode: 'id', value });
		const taskOf = (node: string) => `={{ $('${node}').item.json.task_id }}`;
		const chat = (name: string, content: string, streaming: string): SettingsNodeSpec => ({
			name,
			type: nodeType('genGatewayChat'),
			parameters: {
				operation: 'message',
				model: rl('gpt-4o-mini'),
				messages: { values: [{ role: 'user', content }] },
				simplify: true,
				options: { streaming },
			},
			credentials,
			...ON,
		});
		return branchedWorkflow(
			'new-api: the main jobs',
			[
				[
					videoNode(
						'Generate and Wait',
						ref,
						{ operation: 'generate', model: 'gk_1.5', prompt: PROMPTS.wait, options: { pollInterval: 1 } },
						ON,
					),
				],
				[
					videoNode(
						'Submit (status)',
						ref,
						{ operation: 'generate', model: 'gk_1.5', prompt: PROMPTS.status, waitForCompletion: false },
						ON,
					),
					videoNode('Get Status (running)', ref, { operation: 'getStatus', taskId: taskOf('Submit (status)') }, ON),
					videoNode(
						'List Artifacts (running)',
						ref,
						{ operation: 'listArtifacts', taskId: taskOf('Submit (status)') },
						ON,
					),
					videoNode(
						'Wait for Completion',
						ref,
						{
							operation: 'waitForCompletion',
							taskId: taskOf('Submit (status)'),
							downloadVideo: false,
							options: { pollInterval: 1 },
						},
						ON,
					),
					videoNode('List Artifacts', ref, { operation: 'listArtifacts', taskId: taskOf('Submit (status)') }, ON),
					videoNode(
						'Download',
						ref,
						{ operation: 'download', taskId: taskOf('Submit (status)'), artifactKey: 'video' },
						ON,
					),
					videoNode('Get Status (done)', ref, { operation: 'getStatus', taskId: taskOf('Submit (status)') }, ON),
				],
				[
					videoNode(
						'Submit (check)',
						ref,
						{ operation: 'generate', model: 'gk_1.5', prompt: PROMPTS.check, waitForCompletion: false },
						ON,
					),
					{
						name: 'Wait 2 s',
						type: 'n8n-nodes-base.wait',
						typeVersion: 1.1,
						parameters: { resume: 'timeInterval', amount: 2, unit: 'seconds' },
					},
					videoNode(
						'Check',
						ref,
						{ operation: 'check', taskId: '={{ $json.task_id }}', submittedAt: '={{ $json.submitted_at }}' },
						ON,
					),
				],
				[chat('Chat', CHAT.plain, 'never')],
				[chat('Chat (streamed)', CHAT.streamed, 'always')],
				[
					{
						name: 'Image',
						type: nodeType('genGatewayImage'),
						parameters: {
							operation: 'generate',
							model: rl('img-1'),
							prompt: IMAGE_PROMPT,
							n: 1,
							size: '256x256',
							returnAs: 'binary',
							options: {},
						},
						credentials,
						...ON,
					},
				],
				[
					{
						name: 'Models',
						type: nodeType('genGatewayModels'),
						parameters: { operation: 'getMany', returnAll: true },
						credentials,
						...ON,
					},
				],
				[
					videoNode(
						'Generate (refused key)',
						refused,
						{ operation: 'generate', model: 'gk_1.5', prompt: PROMPTS.refused, waitForCompletion: false },
						ON,
					),
					{
						...chat('Chat (refused key)', CHAT.refused, 'never'),
						credentials: { genGatewayApi: { id: refused.id, name: refused.name } },
					},
				],
			],
			[['Check', 1, 'Wait 2 s']],
		);
	};

	/** The items of a node that must not have failed (a failed node's item carries `error`: shown whole). */
	const itemsOf = (node: string, output = 0, runIndex = 0) => {
		const items = nodeItems(run.json, node, output, runIndex);
		const failed = items.filter((item) => item.json?.error !== undefined);
		if (failed.length > 0)
			throw new Error(`${node} failed: ${JSON.stringify(failed.map((item) => item.json)).slice(0, 2000)}`);
		return items;
	};
	const postsWith = (path: string, text: string) =>
		log.filter((entry) => entry.method === 'POST' && entry.path === path && JSON.stringify(entry.body).includes(text));
	const statusGets = (taskId: string) =>
		log.filter((entry) => entry.method === 'GET' && entry.path === `/v1/tasks/${taskId}`);
	const exactMp4 = async (binaryId: string, taskId: string) => {
		const bytes = await home.binaryFile(binaryId);
		expect(bytes.subarray(4, 8)).toEqual(MP4_FTYP);
		expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));
	};

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey, personality: 'new-api' });
		home = await createN8nHome({ build: true });
		credential = {
			id: randomId(),
			name: 'Gen Gateway (new-api e2e)',
			type: 'genGatewayApi',
			data: { baseUrl: mock.url, apiKey },
		};
		refusedCredential = {
			id: randomId(),
			name: 'Gen Gateway (new-api e2e, refused key)',
			type: 'genGatewayApi',
			data: { baseUrl: mock.url, apiKey: wrongKey },
		};
		// The server first; the imports go through its REST API as the editor's do, and the
		// credential test below asks the same server. n8n assigns the credentials' ids: the workflow names n8n's.
		server = await home.startServer();
		[credential.id, refusedCredential.id] = await server.importCredentials([credential, refusedCredential]);
		workflowId = await server.importWorkflow(mainJobs(credential, refusedCredential));
		const seen = await logCursor(mock);
		run = await home.execute(workflowId);
		log = await seen();
		if (run.exitCode !== 0 || !run.json) throw new Error(`the main jobs did not run: ${explain(run)}`);
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	it(
		'Generate with Wait for Completion: polls NOT_START … IN_PROGRESS on, ends with the exact mp4, one POST',
		async () => {
			const [item] = itemsOf('Generate and Wait');
			const taskId: string = item.json.task_id;
			expect(taskId).toMatch(/^task_[A-Za-z0-9]{32}$/);
			expect(item.json).toMatchObject({ status: 'SUCCESS', model: 'gk_1.5' });
			expect(item.json.artifacts).toEqual([
				expect.objectContaining({
					key: 'video',
					type: 'video',
					mime_type: 'video/mp4',
					content_url: expect.stringContaining('?access='),
				}),
			]);
			expect(item.binary.data).toMatchObject({ mimeType: 'video/mp4', fileName: `${taskId}.mp4` });
			await exactMp4(item.binary.data.id, taskId);
			expect(postsWith('/v1/tasks/vendor', PROMPTS.wait)).toHaveLength(1);
			// It kept polling through the statuses before SUCCESS (3 s of them at a 1 s interval), none ended the wait.
			expect(statusGets(taskId).length).toBeGreaterThanOrEqual(3);
			expect(item.json.polls).toBeGreaterThanOrEqual(3);
		},
		RUN_TIMEOUT,
	);

	it(
		'the durable Check loop: Still Running with the status and progress the service gave, then Done with the mp4',
		async () => {
			const [submitted] = itemsOf('Submit (check)');
			const taskId: string = submitted.json.task_id;
			const checkRuns = run.json.data.resultData.runData.Check as unknown[];
			const stillRunning = checkRuns.flatMap((_, index) => nodeItems(run.json, 'Check', 1, index));
			const done = checkRuns.flatMap((_, index) => nodeItems(run.json, 'Check', 0, index));
			expect(stillRunning.length).toBeGreaterThanOrEqual(1);
			for (const { json } of stillRunning) {
				expect(json.error).toBeUndefined();
				expect(RUNNING).toContain(json.status);
				expect(json.progress).toMatch(PROGRESS[json.status]);
			}
			expect(done).toHaveLength(1);
			expect(done[0].json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			await exactMp4(done[0].binary.data.id, taskId);
			expect(statusGets(taskId)).toHaveLength(checkRuns.length);
			expect(postsWith('/v1/tasks/vendor', PROMPTS.check)).toHaveLength(1);
		},
		RUN_TIMEOUT,
	);

	it(
		'Get Status shows status and progress as given; List Artifacts on the running task says it is still running',
		async () => {
			const [early] = itemsOf('Get Status (running)');
			expect(RUNNING).toContain(early.json.status);
			expect(early.json.progress).toMatch(PROGRESS[early.json.status]);
			const [late] = itemsOf('Get Status (done)');
			expect(late.json).toMatchObject({ status: 'SUCCESS', progress: '100%' });

			const [listed] = nodeItems(run.json, 'List Artifacts (running)');
			// The empty list new-api gives a running task is its state, said plainly (an error item: Continue On Fail).
			expect(listed.json.error).toMatch(
				/^Video task task_\w+ is still running \(status (NOT_START|SUBMITTED|QUEUED), \d+%\)/,
			);
			expect(RUNNING).toContain(listed.json.status);
			expect(listed.json.progress).toMatch(PROGRESS[listed.json.status]);
			expect(listed.json.artifacts).toBeUndefined();
		},
		RUN_TIMEOUT,
	);

	it(
		'Wait for Completion, List Artifacts and Download after it: the artifact with its content_url, the exact mp4, one POST',
		async () => {
			const [submitted] = itemsOf('Submit (status)');
			const taskId: string = submitted.json.task_id;
			const [completed] = itemsOf('Wait for Completion');
			expect(completed.json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			expect(completed.binary).toBeUndefined();

			const [listed] = itemsOf('List Artifacts');
			expect(listed.json).toEqual({
				task_id: taskId,
				artifacts: [
					{
						key: 'video',
						type: 'video',
						mime_type: 'video/mp4',
						content_url: expect.stringMatching(
							new RegExp(`^${mock.url}/v1/tasks/${taskId}/artifacts/video/content\\?access=`),
						),
					},
				],
			});
			const [downloaded] = itemsOf('Download');
			expect(downloaded.json).toMatchObject({ task_id: taskId, artifact_key: 'video', mime_type: 'video/mp4' });
			await exactMp4(downloaded.binary.data.id, taskId);
			expect(postsWith('/v1/tasks/vendor', PROMPTS.status)).toHaveLength(1);
		},
		RUN_TIMEOUT,
	);

	it(
		'Chat, not streamed and streamed (PING comments, the usage chunk): the echo, one POST each',
		async () => {
			for (const [node, text, stream] of [
				['Chat', CHAT.plain, false],
				['Chat (streamed)', CHAT.streamed, true],
			] as const) {
				const [item] = itemsOf(node);
				expect(item.json).toMatchObject({
					content: `Echo: ${text}`,
					role: 'assistant',
					finish_reason: 'stop',
					model: 'gpt-4o-mini',
				});
				const calls = postsWith('/v1/chat/completions', text);
				expect(calls).toHaveLength(1);
				expect(calls[0].status).toBe(200);
				expect(Boolean((calls[0].body as { stream?: boolean }).stream)).toBe(stream);
				if (stream) {
					// The usage came from new-api's last chunk (choices: []), asked for by include_usage.
					expect(calls[0].body).toMatchObject({ stream_options: { include_usage: true } });
					expect(item.json.usage).toMatchObject({ completion_tokens: text.split(' ').length + 1 });
				}
			}
		},
		RUN_TIMEOUT,
	);

	it(
		"Image: the PNG, one POST; Models: new-api's list with every model",
		async () => {
			const [image] = itemsOf('Image');
			expect(image.binary.data).toMatchObject({ mimeType: 'image/png' });
			const png = await home.binaryFile(image.binary.data.id);
			expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
			expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([256, 256]);
			expect(postsWith('/v1/images/generations', IMAGE_PROMPT)).toHaveLength(1);

			const models = itemsOf('Models').map((item) => item.json);
			const offered = (await (
				await fetch(`${mock.url}/v1/models`, { headers: { Authorization: `Bearer ${apiKey}` } })
			).json()) as {
				data: Array<{ id: string }>;
			};
			expect(models.map((model) => model.id).sort()).toEqual(offered.data.map((model) => model.id).sort());
			expect(models.find((model) => model.id === 'gpt-4o-mini')).toMatchObject({
				supported_endpoint_types: ['openai'],
			});
		},
		RUN_TIMEOUT,
	);

	it(
		'a refused key (401) on Video and Chat: the error names the refused key, nothing paid, the key nowhere',
		async () => {
			for (const [node, path, text] of [
				['Generate (refused key)', '/v1/tasks/vendor', PROMPTS.refused],
				['Chat (refused key)', '/v1/chat/completions', CHAT.refused],
			] as const) {
				const [item] = nodeItems(run.json, node);
				expect(String(item.json.error)).toMatch(/401/);
				const posts = postsWith(path, text);
				expect(posts.map((entry) => entry.status)).toEqual([401]);
				expect(JSON.stringify(item.json)).not.toContain(wrongKey);
			}
			expect(
				log.filter((entry) => entry.taskId !== undefined && JSON.stringify(entry.body ?? '').includes(PROMPTS.refused)),
			).toEqual([]);
		},
		RUN_TIMEOUT,
	);

	it(
		'the credential test: OK with the key, refused with a wrong one (new-api answers 401); no key anywhere',
		async () => {
			if (!server) throw new Error('needs the server beforeAll started');
			const cookie = await server.ownerSession();
			const answers: string[] = [];
			const test = async (data: Record<string, unknown>) => {
				const response = await server!.rest('POST', '/rest/credentials/test', {
					cookie,
					body: { credentials: { id: credential.id, name: credential.name, type: 'genGatewayApi', data } },
				});
				answers.push(JSON.stringify(response.body));
				expect(response.status).toBe(200);
				return response.body.data as { status: string; message: string };
			};
			const seen = await logCursor(mock);
			expect(await test({ baseUrl: mock.url, apiKey })).toEqual({ status: 'OK', message: 'Connection successful!' });
			const refused = await test({ baseUrl: mock.url, apiKey: wrongKey });
			expect(refused.status).toBe('Error');
			expect(RULE_401).toBeDefined();
			expect(refused.message).toBe(RULE_401);
			const calls = (await seen()).filter((entry) => entry.path.startsWith('/v1/'));
			// n8n 2.41.1 sends its test request once more after a 401 (httpRequestWithAuthentication's
			// preAuthentication retry, run for every credential type when the request throws): a second GET, no harm.
			expect(calls.map((entry) => [entry.method, entry.path, entry.status])).toEqual([
				['GET', '/v1/models', 200],
				['GET', '/v1/models', 401],
				['GET', '/v1/models', 401],
			]);
			for (const key of [apiKey, wrongKey]) expect(answers.filter((answer) => answer.includes(key))).toEqual([]);
			await server.stop();
			server = undefined;
			expect(home.findSecret(apiKey)).toEqual([]);
			expect(home.findSecret(wrongKey)).toEqual([]);
		},
		RUN_TIMEOUT,
	);
});
