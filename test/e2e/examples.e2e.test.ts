// The example workflows of examples/, imported unchanged into a real n8n (2.41.1) with our built package loaded as a
// community package, run headlessly by one `n8n execute-batch` (one after another, in one n8n process) against the
// mock service (a separate process on loopback). The credential they all name ("Gen Gateway (mock)",
// GenGatewayMock01) is imported pointing at the mock. One workflow of the test's own rides along in the same import
// (no extra n8n start): Image → Chat asking about the picture, in both chat operations (issue 23). Everything runs
// twice: against the mock as the contract describes the service, and against the mock speaking as new-api, the gateway
// the contract comes from (issue 27): the same results both ways. Which examples run here and why the others do not:
// RUN_HERE below.
// Time: about 70 s on a quiet machine (two homes, each with three n8n CLI processes); 286 s in CI before the batch.
import { spawnMockProcess, type MockClient } from '../mock/process';
import { EXAMPLE_CREDENTIAL, exampleCredential, exampleFiles, loadExample, type ExampleWorkflow } from './workflows/examples';
import { importWorkflows } from './workflows/imports';
import { expectSucceeded, RUN_TIMEOUT, SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import type { LogEntry } from '../mock/types';
import { createN8nHome, linearWorkflow, nodeItems, nodeJson, nodeType, randomId, type ExecuteResult, type N8nHome } from './n8n';

const MP4_FTYP = Buffer.from('ftyp');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const QUESTION = 'What is in this picture?';

/** Generate Image → two Chat nodes (Message a Model, Create a Response), each asking about the image's binary "data". */
function askAboutImageWorkflow(): ExampleWorkflow {
	const credentials = { genGatewayApi: EXAMPLE_CREDENTIAL };
	const ask = (name: string, operation: string, list: string) => ({
		name,
		type: nodeType('genGatewayChat'),
		parameters: {
			operation,
			model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' },
			[list]: { values: [{ role: 'user', content: QUESTION, imageSource: 'binary', binaryPropertyName: 'data' }] },
			options: {},
		},
		credentials,
	});
	const workflow = linearWorkflow('Chat: ask about a generated image', [
		{
			name: 'Generate Image',
			type: nodeType('genGatewayImage'),
			parameters: { operation: 'generate', model: { __rl: true, mode: 'id', value: 'img-1' }, prompt: 'A red fox', size: '256x256' },
			credentials,
		},
		ask('Ask (chat)', 'message', 'messages'),
		ask('Ask (responses)', 'response', 'input'),
	], 'ggExampleAskImg1'); // a digit in the id: n8n execute-batch takes no other
	// Both Chat nodes take the Image node's output (the first Chat node passes no binary on).
	const connections = workflow.connections as Record<string, { main: Array<Array<{ node: string }>> }>;
	connections['Generate Image'].main[0].push({ ...connections['Ask (chat)'].main[0][0] });
	delete connections['Ask (chat)'];
	return workflow as unknown as ExampleWorkflow;
}

/**
 * The examples not run here: form-upload-to-video.json needs a server (its form and the signed URL of its upload:
 * imageToVideo.e2e.test.ts), video-recover-paid-tasks.json a crashed run's Task Ledger, ai-agent-video-tool.json a chat
 * (agent.e2e.test.ts), video-long-task-durable-wait.json a Wait of 70 s (durable.e2e.test.ts).
 */
const RUN_ELSEWHERE = ['form-upload-to-video.json', 'video-recover-paid-tasks.json', 'ai-agent-video-tool.json', 'video-long-task-durable-wait.json'];

/** The examples run here, from their Manual Trigger (and the test's own Image → Chat workflow). */
const RUN_HERE = [
	'list-models.json',
	'chat.json',
	'image-to-binary.json',
	'ask-about-image',
	'video-generate-and-wait.json',
	'image-to-video.json',
	'video-submit-now-resume-later.json',
	'video-batch.json',
];

/**
 * The mock's log entries of one run of the batch: from its start to the next run's (the batch runs one workflow after
 * another; an entry the mock wrote as a connection closed, after n8n had stopped the run, still counts as this run's).
 */
function logOfRun(log: LogEntry[], runs: Iterable<ExecuteResult>, run: ExecuteResult): LogEntry[] {
	const from = Date.parse(run.json.startedAt);
	const starts = [...runs].filter((other) => other.json).map((other) => Date.parse(other.json.startedAt));
	const to = Math.min(Infinity, ...starts.filter((start) => start > from));
	return log.filter((entry) => Date.parse(entry.time) >= from && Date.parse(entry.time) < to);
}

describe.each(['default', 'new-api'] as const)('examples/ in a real n8n, the mock speaking as %s', (personality) => {
	const apiKey = `sk-e2e-examples-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	const examples = new Map<string, ExampleWorkflow>();

	/** What the one batch run of every example below gave, by workflow id; the mock's log of the whole batch. */
	let runs: Map<string, ExecuteResult>;
	let batchLog: LogEntry[];

	/** One example's run by file name, with the mock log of that run (the batch ran them one after another). */
	const runExample = async (file: string) => {
		const workflow = examples.get(file);
		if (!workflow) throw new Error(`no example ${file}`);
		const run = runs.get(workflow.id);
		if (!run) throw new Error(`example ${file} was not in the batch`);
		return { run, workflow, log: run.json ? logOfRun(batchLog, runs.values(), run) : [] };
	};

	beforeAll(async () => {
		// Video tasks run 1.6 s (default 0.5 s): the first, immediate status check then surely finds them unfinished,
		// even when this busy machine stalls n8n for a moment, so a real wait between polls is always exercised.
		mock = await spawnMockProcess({ apiKey, personality, defaults: { queuedMs: 100, runMs: 1500 } });
		home = await createN8nHome({ build: true });
		await home.importCredential(exampleCredential(mock.url, apiKey));
		for (const file of exampleFiles()) examples.set(file, loadExample(file));
		examples.set('ask-about-image', askAboutImageWorkflow());
		// All examples in one import, and all those that run from their trigger in one `n8n execute-batch` (each CLI
		// call is a cold n8n start: one run per example took twice as long).
		await importWorkflows(home, [...examples.values()]);
		runs = await home.executeBatch(RUN_HERE.map((file) => examples.get(file)!.id));
		batchLog = await mock.log();
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await mock?.stop();
		await home?.dispose();
	});

	it('every example is run here or named where it runs (a new example cannot go untested)', () => {
		const files = [...examples.keys()].filter((file) => file !== 'ask-about-image');
		expect(files.filter((file) => !RUN_ELSEWHERE.includes(file)).sort()).toEqual(RUN_HERE.filter((file) => file !== 'ask-about-image').sort());
	});

	it('every example names the credential that was imported', () => {
		// Guards the premise of the runs below: the files run unchanged.
		for (const [file, workflow] of examples) {
			if (file === 'ask-about-image') continue;
			const ours = workflow.nodes.filter((node) => node.type.startsWith('n8n-nodes-gen-gateway.'));
			expect(ours.length).toBeGreaterThan(0);
			for (const node of ours) expect((node as { credentials?: unknown }).credentials).toEqual({ genGatewayApi: EXAMPLE_CREDENTIAL });
		}
		expect([...examples.keys()]).toEqual(
			expect.arrayContaining([
				'list-models.json',
				'chat.json',
				'image-to-binary.json',
				'video-generate-and-wait.json',
				'video-submit-now-resume-later.json',
				'video-batch.json',
				'image-to-video.json',
				'form-upload-to-video.json',
				'video-recover-paid-tasks.json',
			]),
		);
	});

	it(
		'list-models: lists exactly the models the mock offers',
		async () => {
			const response = await fetch(`${mock.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
			const offered = ((await response.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id);

			const { run, log } = await runExample('list-models.json');

			expectSucceeded(run);
			expect(nodeJson(run.json, 'List Models').map((model) => model.id).sort()).toEqual([...offered].sort());
			const calls = log.filter((entry) => entry.path.startsWith('/v1/models'));
			expect(calls.length).toBeGreaterThan(0);
			expect(calls.every((entry) => entry.authorized)).toBe(true);
		},
		RUN_TIMEOUT,
	);

	it(
		'chat: returns the reply assembled from the SSE stream',
		async () => {
			const { run, workflow, log } = await runExample('chat.json');

			expectSucceeded(run);
			const parameters = workflow.nodes.find((node) => node.name === 'Message a Model')!.parameters as {
				messages: { values: Array<{ content: string }> };
			};
			const userText = parameters.messages.values[0].content;
			const words = userText.split(/\s+/).length + 1;
			expect(nodeJson(run.json, 'Message a Model')).toEqual([
				expect.objectContaining({
					content: `Echo: ${userText}`,
					role: 'assistant',
					finish_reason: 'stop',
					model: 'gpt-4o-mini',
					usage: expect.objectContaining({ completion_tokens: words }),
				}),
			]);
			// The answer really came as a stream (one delta per word), and the system message went first.
			const [call] = log.filter((entry) => entry.path === '/v1/chat/completions');
			expect(call.body).toMatchObject({
				model: 'gpt-4o-mini',
				stream: true,
				messages: [
					{ role: 'system', content: 'You are a concise assistant.' },
					{ role: 'user', content: userText },
				],
			});
			expect(call.status).toBe(200);
		},
		RUN_TIMEOUT,
	);

	it(
		'image-to-binary: yields the PNG the mock served as binary data, stored on disk',
		async () => {
			const { run, log } = await runExample('image-to-binary.json');

			expectSucceeded(run);
			const items = nodeItems(run.json, 'Generate Image');
			expect(items).toHaveLength(1);
			const binary = items[0].binary.data;
			expect(binary).toMatchObject({ mimeType: 'image/png' });
			expect(binary.id).toMatch(/^filesystem(-v2)?:/);
			const bytes = await home.binaryFile(binary.id);
			expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
			// IHDR: width and height as asked (256x256).
			expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([256, 256]);
			const served = log.filter((entry) => entry.path.startsWith('/files/images/') && entry.status === 200);
			expect(served).toHaveLength(1);
			expect(sha256(bytes)).toBe(served[0].sha256);
			const [generation] = log.filter((entry) => entry.path === '/v1/images/generations');
			expect(generation.body).toMatchObject({ model: 'img-1', n: 1, size: '256x256' });
		},
		RUN_TIMEOUT,
	);

	it(
		'Image → Chat asks about the generated picture: its bytes reach the model as a data: URL in both operations',
		async () => {
			const { run, log } = await runExample('ask-about-image');
			expectSucceeded(run);
			const bytes = await home.binaryFile(nodeItems(run.json, 'Generate Image')[0].binary.data.id);
			const seen = `[image image/png, ${bytes.length} bytes]`;
			expect(nodeJson(run.json, 'Ask (chat)')).toEqual([expect.objectContaining({ content: `Echo: ${QUESTION}\n${seen}` })]);
			expect(nodeJson(run.json, 'Ask (responses)')).toEqual([expect.objectContaining({ content: `Echo: ${QUESTION}\n${seen}` })]);
			const dataUrl = `data:image/png;base64,${bytes.toString('base64')}`;
			const [chat] = log.filter((entry) => entry.path === '/v1/chat/completions');
			expect(chat.body).toMatchObject({
				messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'image_url', image_url: { url: dataUrl } }] }],
			});
			const [response] = log.filter((entry) => entry.path === '/v1/responses');
			expect(response.body).toMatchObject({
				input: [{ role: 'user', content: [{ type: 'input_text', text: QUESTION }, { type: 'input_image', image_url: dataUrl, detail: 'auto' }] }],
			});
			expect([chat.status, response.status]).toEqual([200, 200]);
		},
		RUN_TIMEOUT,
	);

	it(
		'video-generate-and-wait: polls, then the binary "data" is the mock\'s mp4, byte for byte, in filesystem mode',
		async () => {
			const { run, log } = await runExample('video-generate-and-wait.json');

			expectSucceeded(run);
			const [item] = nodeItems(run.json, 'Generate Video');
			expect(item.json).toMatchObject({
				status: 'SUCCESS',
				model: 'sd_2.0_fast_discount',
				resumed: false,
				request: { model: 'sd_2.0_fast_discount', duration: 5, aspect_ratio: '16:9' },
			});
			// The task takes 1.6 s and the first check is immediate: n8n really waited between polls.
			expect(item.json.polls).toBeGreaterThanOrEqual(2);
			const taskId: string = item.json.task_id;
			const binary = item.binary.data;
			expect(binary).toMatchObject({ mimeType: 'video/mp4', fileName: `${taskId}.mp4` });
			expect(binary.id).toMatch(/^filesystem(-v2)?:/);
			expect(item.json.request.prompt).toBe('A red fox running through fresh snow at sunrise, cinematic');

			const bytes = await home.binaryFile(binary.id);
			expect(bytes.subarray(4, 8)).toEqual(MP4_FTYP);
			expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));
			expect(submissionsIn(log)).toHaveLength(1);
		},
		RUN_TIMEOUT,
	);

	it(
		'image-to-video: the generated image\'s URL is the first frame; the service fetched exactly its bytes; the mp4 arrives',
		async () => {
			const { run, log } = await runExample('image-to-video.json');

			expectSucceeded(run);
			const [image] = nodeItems(run.json, 'Generate Image');
			const imageUrl: string = image.json.url;
			expect(imageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/images\/img_\w+\.png$/);
			const imageBytes = await home.binaryFile(image.binary.data.id);
			expect(imageBytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);

			const [video] = nodeItems(run.json, 'Generate Video');
			expect(video.json).toMatchObject({
				status: 'SUCCESS',
				model: 'gk_1.5',
				request: { model: 'gk_1.5', first_image: imageUrl, prompt: expect.stringMatching(/^A lighthouse on a cliff/) },
			});
			expect(video.json.binary_urls).toBeUndefined(); // a URL source: nothing signed by n8n
			const taskId: string = video.json.task_id;
			// The mock (on loopback) fetched the frame as a service would: the very bytes the Image node holds.
			expect(await mock.fetchedMedia(taskId)).toEqual([
				expect.objectContaining({ field: 'first_image', url: imageUrl, status: 200, sha256: sha256(imageBytes) }),
			]);
			const mp4 = await home.binaryFile(video.binary.data.id);
			expect(mp4.subarray(4, 8)).toEqual(MP4_FTYP);
			expect(sha256(mp4)).toBe(await mock.artifactSha256(taskId));
			expect(submissionsIn(log)).toHaveLength(1);
		},
		RUN_TIMEOUT,
	);

	it(
		'video-submit-now-resume-later: Generate returns the task at once, Wait, Wait for Completion, Download',
		async () => {
			const { run, log } = await runExample('video-submit-now-resume-later.json');

			expectSucceeded(run);
			const [submitted] = nodeJson(run.json, 'Submit Video');
			expect(submitted).toMatchObject({ status: 'SUBMITTED', model: 'gk_1.5', resumed: false });
			const taskId: string = submitted.task_id;
			expect(taskId).toMatch(/^task_/);
			// No binary and no wait on the submitting node.
			expect(nodeItems(run.json, 'Submit Video')[0].binary).toBeUndefined();

			const [completed] = nodeItems(run.json, 'Wait for Completion');
			expect(completed.json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
			expect(completed.json.artifacts).toEqual([expect.objectContaining({ key: 'video', mime_type: 'video/mp4' })]);
			expect(completed.binary).toBeUndefined(); // downloadVideo: false in the example

			const [downloaded] = nodeItems(run.json, 'Download Video');
			expect(downloaded.json).toMatchObject({ task_id: taskId, artifact_key: 'video', mime_type: 'video/mp4' });
			const bytes = await home.binaryFile(downloaded.binary.data.id);
			expect(sha256(bytes)).toBe(await mock.artifactSha256(taskId));

			// One paid submission; the Wait node's pause lies between it and the first status check.
			const submissions = submissionsIn(log);
			expect(submissions).toHaveLength(1);
			const firstCheck = log.find((entry) => entry.method === 'GET' && entry.path === `/v1/tasks/${taskId}`);
			expect(Date.parse(firstCheck!.time) - Date.parse(submissions[0].time)).toBeGreaterThanOrEqual(4500);
		},
		RUN_TIMEOUT,
	);

	it(
		'video-batch: four prompts, four tasks, each with its own mp4, in input order',
		async () => {
			const { run, log } = await runExample('video-batch.json');

			expectSucceeded(run);
			const prompts = nodeJson(run.json, 'One Item per Prompt');
			expect(prompts).toHaveLength(4);
			const items = nodeItems(run.json, 'Generate Videos');
			expect(items).toHaveLength(4);
			const submissions = submissionsIn(log);
			expect(submissions).toHaveLength(4);

			const taskIds = new Set<string>();
			for (const [index, item] of items.entries()) {
				expect(item.json).toMatchObject({
					status: 'SUCCESS',
					request: { model: 'sd_2.0_discount', prompt: prompts[index].prompt, aspect_ratio: prompts[index].ratio },
				});
				expect(item.pairedItem).toEqual({ item: index });
				taskIds.add(item.json.task_id);
				const bytes = await home.binaryFile(item.binary.data.id);
				expect(sha256(bytes)).toBe(await mock.artifactSha256(item.json.task_id));
			}
			expect(taskIds.size).toBe(4);
			// Submitted together: one after another's wait would put at least a 5 s poll interval between them.
			const times = submissions.map((entry) => Date.parse(entry.time));
			expect(Math.max(...times) - Math.min(...times)).toBeLessThan(4500);
		},
		RUN_TIMEOUT,
	);

	it('never writes the API key to n8n\'s output, logs or any file of the n8n home', () => {
		// Positive control: the runs above happened in this home, and n8n sent the key (the mock saw it authorised).
		expect(home.logs()).toContain('Start executing node "Generate Video"');
		expect(home.findSecret(apiKey)).toEqual([]);
	});
});
