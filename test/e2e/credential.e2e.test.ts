// The credential's Test button in a real n8n (2.41.1; 1.123.81 with GEN_GATEWAY_E2E_N8N=1): the editor's call `POST /rest/credentials/test` on a server
// started with our package, against the mock service on loopback. n8n 1.123 tests a stored credential only (the body
// names its id) and merges the form's data over the stored data: a secret left untouched comes back redacted and n8n
// puts the stored one in its place.
import fc from 'fast-check';

import { spawnMockProcess, type MockClient } from '../mock/process';
import { logCursor, RUN_TIMEOUT, SETUP_TIMEOUT } from './workflows/runs';
import { createN8nHome, e2eMajor, freePort, randomId, type CredentialImport, type N8nHome, type N8nServer } from './n8n';
import { GenGatewayApi } from '../../credentials/GenGatewayApi.credentials';
import { sendJson, startScriptedServer } from '../support/scriptedServer';

/** The credential's own message for a status (its test `rules`). */
const ruleFor = (status: number) =>
	new GenGatewayApi().test.rules!.find((rule) => rule.properties.value === status)!.properties.message;
const RULE_403 = ruleFor(403);

/**
 * What n8n answers when the test request fails (measured): never the service's error.message. n8n 2.41 applies the
 * credential's `rules` (our text for 403); 1.123 loses the response on the way and shows its own hint instead.
 */
const N8N_SAYS =
	e2eMajor() === 2
		? { forbidden: RULE_403, refused: 'ECONNREFUSED' }
		: {
				forbidden: 'Forbidden - perhaps check your credentials?',
				refused: 'The service refused the connection - perhaps it is offline',
			};

/** What the editor sends in place of a secret it shows redacted (n8n's CREDENTIAL_BLANKING_VALUE). */
const BLANKED = /^__n8n_BLANK_VALUE_/;

describe('Gen Gateway API credential test in a real n8n', () => {
	const apiKey = `sk-e2e-credential-${randomId(24)}`;
	const wrongKey = `sk-e2e-wrong-${randomId(24)}`;
	let mock: MockClient;
	let home: N8nHome;
	let server: N8nServer;
	let cookie: string;
	let credential: CredentialImport;
	/** Every body n8n's REST API answered in this file, to scan for the key. */
	const answers: string[] = [];

	const rest = async (method: string, path: string, body?: unknown) => {
		const response = await server.rest(method, path, { cookie, body });
		answers.push(typeof response.body === 'string' ? response.body : JSON.stringify(response.body));
		return response;
	};

	/** The editor's Test button: the credential as the form holds it. */
	const testCredential = async (data: Record<string, unknown>) => {
		const response = await rest('POST', '/rest/credentials/test', {
			credentials: { id: credential.id, name: credential.name, type: 'genGatewayApi', data },
		});
		expect(response.status).toBe(200);
		return response.body.data as { status: string; message: string };
	};

	/** The stored credential as the editor loads it (secrets redacted). */
	const storedData = async () => {
		const response = await rest('GET', `/rest/credentials/${credential.id}?includeData=true`);
		expect(response.status).toBe(200);
		return response.body.data.data as Record<string, unknown>;
	};

	beforeAll(async () => {
		mock = await spawnMockProcess({ apiKey });
		home = await createN8nHome({ build: true });
		credential = { id: randomId(), name: 'Gen Gateway (credential e2e)', type: 'genGatewayApi', data: { baseUrl: mock.url, apiKey } };
		server = await home.startServer();
		cookie = await server.ownerSession();
		// Created as the editor's dialog creates it (REST); n8n gives it its id.
		credential.id = await server.importCredential(credential);
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await server?.stop();
		await mock?.stop();
		await home?.dispose();
	});

	it(
		'the editor gets the stored credential with the key redacted',
		async () => {
			const data = await storedData();
			expect(data.baseUrl).toBe(mock.url);
			expect(data.apiKey).toMatch(BLANKED);
		},
		RUN_TIMEOUT,
	);

	it(
		'with the stored (right) key: status OK, after an authorised GET /v1/models',
		async () => {
			const seen = await logCursor(mock);
			const result = await testCredential(await storedData());

			expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
			const calls = (await seen()).filter((entry) => entry.path.startsWith('/v1/'));
			expect(calls.map((entry) => [entry.method, entry.path, entry.status, entry.authorized])).toEqual([
				['GET', '/v1/models', 200, true],
			]);
		},
		RUN_TIMEOUT,
	);

	it(
		'a base URL typed with /v1 and a trailing slash still tests OK',
		async () => {
			const seen = await logCursor(mock);
			const result = await testCredential({ ...(await storedData()), baseUrl: `${mock.url}/v1/` });

			expect(result.status).toBe('OK');
			expect((await seen()).filter((entry) => entry.path.startsWith('/v1/')).map((entry) => entry.path)).toEqual(['/v1/models']);
		},
		RUN_TIMEOUT,
	);

	it(
		'with a wrong key typed into the form: an error status that says the credentials were refused (403)',
		async () => {
			const seen = await logCursor(mock);
			const result = await testCredential({ ...(await storedData()), apiKey: wrongKey });

			expect(result.status).toBe('Error');
			const [call] = (await seen()).filter((entry) => entry.path.startsWith('/v1/'));
			expect(call).toMatchObject({ method: 'GET', path: '/v1/models', status: 403, authorized: false });
			expect(call.error).toBeTruthy(); // the service's own message, which n8n does not pass on
			expect(result.message).toBe(N8N_SAYS.forbidden);
			expect(result.message).not.toContain(wrongKey);
		},
		RUN_TIMEOUT,
	);

	it(
		'with a base URL where nothing listens: an error status that names the refused connection',
		async () => {
			const closedPort = await freePort();
			const result = await testCredential({ ...(await storedData()), baseUrl: `http://127.0.0.1:${closedPort}` });

			expect(result.status).toBe('Error');
			expect(result.message).toBe(N8N_SAYS.refused);
		},
		RUN_TIMEOUT,
	);

	it(
		"a base URL that redirects, generated (the status; to another port, another host name of loopback, the base's own " +
			'origin, absolute or relative; the base URL typed with /v1 or a trailing slash): the key reaches the base URL only, ' +
			'nothing is followed, and n8n 2.x says to enter the address the service answers at (issue 51, point 2: the key ' +
			'was sent to the other origin, and the Test said "Connection successful!")',
		async () => {
			const elsewhere = await startScriptedServer((_req, res) => sendJson(res, 200, { object: 'list', data: [] }));
			let answer = { status: 302, location: '/' };
			const redirector = await startScriptedServer((_req, res) => {
				res.writeHead(answer.status, { location: answer.location }).end();
			});
			const other = new URL(elsewhere.url);
			const targets = {
				otherPort: `${elsewhere.url}/v1/models`,
				otherHostName: `http://localhost:${other.port}/v1/models`,
				sameOriginOtherName: `${redirector.url.replace('127.0.0.1', 'localhost')}/v1/models`,
				sameOrigin: `${redirector.url}/v2/models`,
				relative: '/v1/models?again=1',
			};
			try {
				await fc.assert(
					fc.asyncProperty(
						fc.constantFrom(301, 302, 303, 307, 308),
						fc.constantFrom(...(Object.keys(targets) as (keyof typeof targets)[])),
						fc.constantFrom('', '/', '/v1', '/v1/'),
						async (status, target, typed) => {
							answer = { status, location: targets[target] };
							const before = { redirector: redirector.requests.length, elsewhere: elsewhere.requests.length };
							const result = await testCredential({ ...(await storedData()), baseUrl: `${redirector.url}${typed}` });

							// One request, to the base URL, with the key; nothing followed, anywhere.
							const asked = redirector.requests.slice(before.redirector);
							expect(asked.map((request) => [request.path, request.headers.authorization !== undefined])).toEqual([
								['/v1/models', true],
							]);
							expect(elsewhere.requests.length).toBe(before.elsewhere);
							expect(result.status).toBe('Error');
							if (e2eMajor() === 2) expect(result.message).toBe(ruleFor(status));
						},
					),
					{ numRuns: 25 },
				);
			} finally {
				await elsewhere.close();
				await redirector.close();
			}
		},
		RUN_TIMEOUT,
	);

	it("never puts either key into n8n's answers, output, logs or files", async () => {
		// Runs on its own too (jest -t): then it makes the calls the scan needs.
		if (answers.length === 0) await testCredential({ ...(await storedData()), apiKey: wrongKey });
		expect(answers.length).toBeGreaterThanOrEqual(2);
		for (const key of [apiKey, wrongKey]) {
			expect(answers.filter((answer) => answer.includes(key))).toEqual([]);
		}
		await server.stop();
		// Positive control: the server's output is in the scanned logs.
		expect(home.logs()).toContain('n8n start');
		expect(home.findSecret(apiKey)).toEqual([]);
		expect(home.findSecret(wrongKey)).toEqual([]);
	}, RUN_TIMEOUT);
});
