// Time: about 25 s (one home, one `n8n start` 14 s, the imports over its REST API, the run 6 s).
// examples/form-upload-to-video.json, unchanged, in a real n8n 2.41.1 served by `n8n start` (issue 32): a picture
// posted to the workflow's production form becomes the video's first frame by binary. n8n signs a URL for the uploaded
// file (`/rest/binary-data/signed?token=…`, valid for the node's Max Wait), the mock service (on loopback, as its own
// process) fetches that URL at submission as a real service would and fails the task when it cannot, and the test
// compares what it fetched with the uploaded bytes. The link still serves them after the execution ended (n8n renames
// a webhook's upload then; the node signed a copy). The other example of the chain (image-to-video.json: a generated
// image's own URL) needs no server: examples.e2e.test.ts runs it.
import { spawnMockProcess, type MockClient } from '../mock/process';
import { deterministicPng } from '../mock/media';
import { timed } from '../timing/phases';
import { exampleCredential, loadExample, type ExampleWorkflow } from './workflows/examples';
import { readExecution, waitForExecutions } from './workflows/executions';
import { RUN_TIMEOUT, SETUP_TIMEOUT, sha256, submissionsIn } from './workflows/runs';
import { createN8nHome, FRESH_CONNECTION, randomId, type N8nHome, type N8nServer } from './n8n';

const EXAMPLE = 'form-upload-to-video.json';
const MP4_FTYP = Buffer.from('ftyp');
const FINISHED = ['success', 'error', 'crashed', 'canceled'];
/** The Max Wait the example leaves at its default (minutes): the signed URL must live exactly that long. */
const MAX_WAIT_SECONDS = 30 * 60;

/** The production form's path, as the example's Form Trigger sets it. */
function formPath(workflow: ExampleWorkflow): string {
	const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.formTrigger')!;
	return (trigger.parameters.options as { path: string }).path;
}

/** n8n registers production forms shortly after its REST API answers: GET renders the form and runs nothing. */
async function waitForForm(url: string, timeoutMs = 120_000): Promise<void> {
	await timed('wait', 'form registration', () => pollForm(url, timeoutMs));
}

async function pollForm(url: string, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if ((await fetch(url, { headers: FRESH_CONNECTION })).status === 200) return;
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
	throw new Error(`the production form ${url} was not registered in ${timeoutMs} ms`);
}

/** The claims of a JWT (not verified: n8n checks it; the test reads its lifetime). */
function jwtClaims(token: string): { iat?: number; exp?: number } {
	return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

describe('examples/form-upload-to-video.json in a real n8n: an uploaded picture is the first frame, by a signed n8n URL', () => {
	const apiKey = `sk-e2e-form-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer | undefined;
	let workflow: ExampleWorkflow;

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey, defaults: { queuedMs: 0, runMs: 0 } });
		home = await createN8nHome({ build: true });
		workflow = loadExample(EXAMPLE);
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	it(
		'the form post runs the workflow: the mock fetched the signed URL with exactly the uploaded bytes, the mp4 is the task\'s',
		async () => {
			server = await home.startServer();
			const cookie = await server.ownerSession();
			// Imported and activated through the server's REST API as the editor does: the production form registers.
			await server.importCredential(exampleCredential(mock.url, apiKey));
			workflow.id = await server.importWorkflow(workflow);
			await server.activateWorkflows([workflow.id]);
			const formUrl = `${server.url}/form/${formPath(workflow)}`;
			await waitForForm(formUrl);

			// A real PNG, posted as a browser posts the form: field-0 the file field (Picture), field-1 the prompt.
			const png = deterministicPng('form-upload-to-video e2e', 64, 48);
			const prompt = 'The leaves start to move in the wind';
			const form = new FormData();
			form.append('field-0', new Blob([png], { type: 'image/png' }), 'frame.png');
			form.append('field-1', prompt);
			const posted = await timed('run', 'form post', () => fetch(formUrl, { method: 'POST', body: form }));
			expect(posted.status).toBe(200);

			const [execution] = await waitForExecutions(
				server,
				cookie,
				workflow.id,
				(executions) => executions.length > 0 && FINISHED.includes(executions[0].status),
				RUN_TIMEOUT / 2,
			);
			const { status, data } = await readExecution(server, cookie, execution.id);
			const runData = data.resultData.runData;
			if (status !== 'success') throw new Error(`execution ${execution.id}: ${status} ${JSON.stringify(data.resultData.error)}`);

			// The Form Trigger names the file field's binary "Picture" (its label), as the Video node reads it.
			const [uploaded] = runData['Upload a Picture'][0].data.main[0];
			expect(uploaded.json).toMatchObject({ Prompt: prompt, formMode: 'production' });
			expect(uploaded.binary.Picture).toMatchObject({ fileName: 'frame.png', mimeType: 'image/png' });
			expect(sha256(await home.binaryFile(uploaded.binary.Picture.id))).toBe(sha256(png));

			const [video] = runData['Generate Video'][0].data.main[0];
			expect(video.json).toMatchObject({ status: 'SUCCESS', model: 'gk_1.5', request: { prompt } });
			const taskId: string = video.json.task_id;
			expect(video.json.binary_urls).toEqual([
				{
					parameter: 'firstImage',
					binary_field: 'Picture',
					file_name: 'frame.png',
					mime_type: 'image/png',
					bytes: png.length,
					url: expect.stringMatching(/\/rest\/binary-data\/signed\?token=[\w-]+\.[\w-]+\.[\w-]+$/),
					expires_at: expect.any(String),
				},
			]);
			const signed: string = video.json.binary_urls[0].url;
			// n8n's own address (its webhook base URL: WEBHOOK_URL), and the very URL the service was sent.
			expect(signed.startsWith(`${server.url}/rest/binary-data/signed?token=`)).toBe(true);
			expect(video.json.request.first_image).toBe(signed);
			// Valid for Max Wait, not longer: the token's own lifetime, and the time the item reports.
			const claims = jwtClaims(new URL(signed).searchParams.get('token')!);
			expect(claims.exp! - claims.iat!).toBe(MAX_WAIT_SECONDS);
			expect(Date.parse(video.json.binary_urls[0].expires_at) / 1000).toBeCloseTo(claims.exp!, -1);

			// The service side: it fetched the signed URL once, from n8n, and got exactly the uploaded picture.
			expect(await mock.fetchedMedia(taskId)).toEqual([
				expect.objectContaining({ field: 'first_image', url: signed, status: 200, bytes: png.length, sha256: sha256(png) }),
			]);
			const mp4 = await home.binaryFile(video.binary.data.id);
			expect(mp4.subarray(4, 8)).toEqual(MP4_FTYP);
			expect(sha256(mp4)).toBe(await mock.artifactSha256(taskId));
			expect(submissionsIn(await mock.log())).toHaveLength(1);
			// n8n keeps a file that came with a webhook's request (a form upload) under a temporary name until the
			// execution ends, then renames it (a link to it would answer 404 from then on). The node signed a copy in the
			// execution's own binary data: the link still serves the picture after the run, for the rest of Max Wait.
			expect(uploaded.binary.Picture.id).toMatch(new RegExp(`/executions/${execution.id}/`));
			const after = await fetch(signed);
			expect(after.status).toBe(200);
			expect(sha256(Buffer.from(await after.arrayBuffer()))).toBe(sha256(png));
			expect(home.findSecret(apiKey)).toEqual([]);
		},
		RUN_TIMEOUT,
	);
});
