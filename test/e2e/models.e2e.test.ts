// The Models node inside a real n8n (2.41.1, or 1.123.81 with GEN_GATEWAY_E2E_N8N=1): our built package installed as a
// community package, the credential and workflows imported through the REST API of the home's `n8n start` (as the
// editor imports), each workflow run by `n8n execute`, and the mock service as a real server on loopback.
import { spawnMockProcess, type MockClient } from '../mock/process';
import {
	createN8nHome,
	linearWorkflow,
	nodeJson,
	nodeType,
	randomId,
	runError,
	type CredentialImport,
	type ExecuteResult,
	type N8nHome,
	type N8nServer,
} from './n8n';

const SETUP_TIMEOUT = 20 * 60_000; // a first run installs n8n (minutes); later runs find it in about 0.1 s
const RUN_TIMEOUT = 3 * 60_000; // a cold `n8n execute` takes 5-10 s on two busy cores

/** A failed expectation on a run shows what n8n printed. */
function explain(run: ExecuteResult): string {
	return `exit ${run.exitCode} (${run.signal ?? 'no signal'})\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`;
}

describe('Gen Gateway Models in a real n8n', () => {
	const apiKey = `sk-e2e-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer;
	let credential: CredentialImport;

	const modelsWorkflow = (credentialRef: CredentialImport) =>
		linearWorkflow('Models e2e', [
			{
				name: 'Models',
				type: nodeType('genGatewayModels'),
				parameters: { operation: 'getMany', returnAll: true },
				credentials: { genGatewayApi: { id: credentialRef.id, name: credentialRef.name } },
			},
		]);

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true });
		credential = {
			id: randomId(),
			name: 'Gen Gateway (e2e)',
			type: 'genGatewayApi',
			data: { baseUrl: mock.url, apiKey },
		};
		server = await home.startServer();
		// n8n gives the credential an id of its own: the workflows name n8n's.
		credential.id = await server.importCredential(credential);
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	it(
		'lists exactly the models the service offers',
		async () => {
			const response = await fetch(`${mock.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
			const offered = ((await response.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id);
			expect(offered.length).toBeGreaterThan(0);

			const before = Math.max(0, ...(await mock.log()).map((entry) => entry.seq));
			const run = await home.execute(await server.importWorkflow(modelsWorkflow(credential)));

			if (run.exitCode !== 0 || runError(run.json) || !run.json) throw new Error(`the run failed: ${explain(run)}`);
			const listed = nodeJson(run.json, 'Models').map((model) => model.id);
			expect(listed.sort()).toEqual([...offered].sort());
			// n8n really sent the key (so the scans below, finding it nowhere, mean something).
			const fromN8n = (await mock.log()).filter((entry) => entry.seq > before && entry.path.startsWith('/v1/models'));
			expect(fromN8n.length).toBeGreaterThan(0);
			expect(fromN8n.every((entry) => entry.authorized)).toBe(true);
		},
		RUN_TIMEOUT,
	);

	it(
		'fails the run with a wrong key, naming the problem',
		async () => {
			const wrong: CredentialImport = {
				id: randomId(),
				name: 'Gen Gateway (wrong key)',
				type: 'genGatewayApi',
				data: { baseUrl: mock.url, apiKey: `sk-wrong-${randomId(24)}` },
			};
			wrong.id = await server.importCredential(wrong);

			const run = await home.execute(await server.importWorkflow(modelsWorkflow(wrong)));

			expect({ exitCode: run.exitCode, ran: run.json !== undefined }).toEqual({ exitCode: 1, ran: true });
			const error = runError(run.json);
			expect(error).toBeDefined();
			expect(`${error.message} ${error.description ?? ''}`).toMatch(/401|403|key|unauthori[sz]ed/i);
			expect(home.findSecret(wrong.data.apiKey as string)).toEqual([]);
		},
		RUN_TIMEOUT,
	);

	it('never writes the API key to output, logs or any file of the n8n home', async () => {
		// Runs on its own too (jest -t): then it makes the run the scan needs.
		if (!home.logs().includes('Start executing node "Models"')) {
			await home.execute(await server.importWorkflow(modelsWorkflow(credential)));
		}
		// n8n's output (debug level), its database and every other file of the home are free of the key.
		// Positive controls: the scan reads n8n's output and its sqlite database (the workflow name is stored plainly;
		// n8n 2.x keeps recent writes in the -wal file).
		expect(home.logs()).toContain('Start executing node "Models"');
		const database = `${home.n8nFolder}/database.sqlite`;
		expect(home.findSecret('Models e2e').some((hit) => hit.where.startsWith(database))).toBe(true);
		expect(home.findSecret(apiKey)).toEqual([]);
	}, RUN_TIMEOUT);

	it(
		'is offered by the n8n server with its credential type',
		async () => {
			try {
				const cookie = await server.ownerSession();
				const nodes = await server.rest('GET', '/types/nodes.json', { cookie });
				const names = (nodes.body as Array<{ name: string }>).map((node) => node.name);
				expect(names).toContain(nodeType('genGatewayModels'));
				const credentials = await server.rest('GET', '/types/credentials.json', { cookie });
				expect((credentials.body as Array<{ name: string }>).map((type) => type.name)).toContain('genGatewayApi');
			} finally {
				await server.stop();
			}
			expect(home.findSecret(apiKey)).toEqual([]);
		},
		RUN_TIMEOUT,
	);
});
