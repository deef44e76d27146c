/**
 * Proves the harness runs nodes through n8n's real engine: credentials applied by the real
 * httpRequestWithAuthentication, binary data through BinaryDataService, Retry/Continue On Fail,
 * expressions, and cancellation. Uses test-only nodes against a throwaway loopback server.
 */
import { existsSync } from 'node:fs';
import { text } from 'node:stream/consumers';

import { CREDENTIAL_TYPE, loadPackageNodeTypes, packageCredentialTypes, runWorkflow } from '../harness/engine';
import type { RunOptions } from '../harness/engine';
import type { TestServer } from '../harness/fixtures/server';
import { startTestServer } from '../harness/fixtures/server';
import { TEST_NODE_TYPES, testNodeEvents } from '../harness/fixtures/test-nodes';

const API_KEY = 'sk-harness-secret-7f3a9c';

let server: TestServer;
beforeAll(async () => {
	server = await startTestServer(API_KEY);
});
afterAll(async () => await server.close());
beforeEach(() => server.authorizations.splice(0));

const run = async (opts: Omit<RunOptions, 'extraNodeTypes'>) =>
	await runWorkflow({ extraNodeTypes: TEST_NODE_TYPES, ...opts });

const credentials = () => ({ baseUrl: server.baseUrl, apiKey: API_KEY });

describe('node types', () => {
	test('discovers the package nodes and credentials from their TypeScript sources', () => {
		const nodeTypes = loadPackageNodeTypes();
		const models = nodeTypes.getByNameAndVersion('n8n-nodes-gen-gateway.genGatewayModels');
		expect(models.description.name).toBe('genGatewayModels');
		expect(nodeTypes.getByNameAndVersion('genGatewayModels')).toBe(models);
		expect(packageCredentialTypes().map((type) => type.name)).toContain(CREDENTIAL_TYPE);
	});

	test('an unknown node type is reported by name', async () => {
		await expect(run({ nodes: [{ name: 'X', type: 'noSuchNode', parameters: {} }] })).rejects.toThrow(/noSuchNode/);
	});
});

describe('credentials', () => {
	test('httpRequestWithAuthentication sends the Bearer header from the real credential type', async () => {
		const result = await run({
			nodes: [{ name: 'Request', type: 'harnessTestRequest', parameters: {}, credentials: true }],
			credentials: credentials(),
		});
		expect(result.error).toBeUndefined();
		expect(result.run.status).toBe('success');
		expect(result.output()).toEqual([
			expect.objectContaining({ json: { object: 'list', data: [{ id: 'test-model', object: 'model' }] } }),
		]);
		expect(server.authorizations).toEqual([`Bearer ${API_KEY}`]);
		expect(result.tries('Request')).toBe(1);
		expect(result.logs.some((line) => line.includes('Running node "Request" finished successfully'))).toBe(true);
		expect(result.logs.join('\n')).not.toContain(API_KEY);
	});

	test('a rejected key fails the node with the HTTP status and stops the workflow', async () => {
		const wrongKey = 'sk-wrong-key-1b2c3d';
		const result = await run({
			nodes: [
				{ name: 'Request', type: 'harnessTestRequest', parameters: {}, credentials: true },
				{ name: 'After', type: 'harness.noOp', parameters: {} },
			],
			credentials: { baseUrl: server.baseUrl, apiKey: wrongKey },
		});
		// n8n-core itself repeats a request once after a 401 (to let expirable credentials refresh).
		expect(server.authorizations).toEqual([`Bearer ${wrongKey}`, `Bearer ${wrongKey}`]);
		expect(result.run.status).toBe('error');
		expect(result.error).toBeInstanceOf(Error);
		const nodeError = result.nodeError('Request') as Error & { httpCode?: string };
		expect(nodeError.httpCode).toBe('401');
		expect(result.run.data.resultData.runData.After).toBeUndefined();
		expect(JSON.stringify(result.run)).not.toContain(wrongKey);
		expect(result.logs.join('\n')).not.toContain(wrongKey);
	});

	test('a node without credentials attached cannot use them', async () => {
		const result = await run({
			nodes: [{ name: 'Request', type: 'harnessTestRequest', parameters: {} }],
			credentials: credentials(),
		});
		expect(result.nodeError('Request')?.message).toMatch(/credentials/i);
		expect(server.authorizations).toEqual([]);
	});
});

describe('binary data', () => {
	test('default mode: an HTTP stream becomes inline binary data', async () => {
		const result = await run({
			nodes: [{ name: 'Download', type: 'harnessTestDownload', parameters: {}, credentials: true }],
			credentials: credentials(),
		});
		expect(result.error).toBeUndefined();
		const [item] = result.output();
		expect(item.binary?.data).toMatchObject({ mimeType: 'video/mp4', fileName: 'clip.mp4', fileExtension: 'mp4' });
		expect(item.binary?.data.id).toBeUndefined();
		expect((await result.readBinary(item)).equals(server.fileBytes)).toBe(true);
		const chunks: Buffer[] = [];
		for await (const chunk of await result.binaryStream(item)) chunks.push(chunk as Buffer);
		expect(Buffer.concat(chunks).equals(server.fileBytes)).toBe(true);
		await result.cleanup();
	});

	test('filesystem mode: binary data lands in a temp folder that cleanup() removes', async () => {
		const result = await run({
			nodes: [{ name: 'Download', type: 'harnessTestDownload', parameters: {}, credentials: true }],
			credentials: credentials(),
			binaryMode: 'filesystem',
		});
		expect(result.error).toBeUndefined();
		const [item] = result.output();
		const binaryId = item.binary?.data.id;
		expect(binaryId).toMatch(/^filesystem-v2:/);
		expect((await result.readBinary(item)).equals(server.fileBytes)).toBe(true);
		const chunks: Buffer[] = [];
		for await (const chunk of await result.binaryStream(item)) chunks.push(chunk as Buffer);
		expect(Buffer.concat(chunks).equals(server.fileBytes)).toBe(true);

		const { BinaryDataService } = await import('n8n-core');
		const { Container } = await import('@n8n/di');
		const filePath = Container.get(BinaryDataService).getPath(binaryId!);
		expect(existsSync(filePath)).toBe(true);
		await result.cleanup();
		expect(existsSync(filePath)).toBe(false);
	});

	test('a Readable made in the node becomes binary data under its own property', async () => {
		const result = await run({ nodes: [{ name: 'Note', type: 'harnessTestStreamBinary', parameters: { text: 'hello binary' } }] });
		const [item] = result.output();
		expect(item.binary?.note.mimeType).toBe('text/plain');
		expect((await result.readBinary(item, 'note')).toString()).toBe('hello binary');
		expect(await text(await result.binaryStream(item, 'note'))).toBe('hello binary');
		await expect(result.readBinary(item)).rejects.toThrow(/no binary property "data"/);
	});
});

describe('input and expressions', () => {
	test('input items reach the first node and expressions resolve per item', async () => {
		const result = await run({
			input: [{ n: 1 }, { n: 2 }],
			nodes: [{ name: 'Echo', type: 'harnessTestEcho', parameters: { value: '={{ $json.n * 10 }}-{{ $execution.id }}' } }],
			executionId: 'exec-42',
		});
		expect(result.output().map((item) => item.json)).toEqual([
			{ n: 1, seen: '10-exec-42' },
			{ n: 2, seen: '20-exec-42' },
		]);
		expect(result.output('Items')).toHaveLength(2);
	});
});

describe('Retry On Fail and Continue On Fail (WorkflowExecute)', () => {
	test('retries until the node succeeds and counts every try', async () => {
		const result = await run({
			input: [{ id: 'a' }],
			nodes: [{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 2 }, retryOnFail: true, maxTries: 3, waitBetweenTries: 1 }],
		});
		expect(result.error).toBeUndefined();
		expect(result.tries('Flaky')).toBe(3);
		expect(result.output().map((item) => item.json)).toEqual([{ id: 'a', call: 3 }]);
	});

	test('gives up after maxTries with the last error', async () => {
		const result = await run({
			nodes: [{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 9 }, retryOnFail: true, maxTries: 2, waitBetweenTries: 1 }],
		});
		expect(result.tries()).toBe(2);
		expect(result.run.status).toBe('error');
		expect(result.nodeError('Flaky')?.message).toBe('Planned failure 2');
	});

	test('without Retry On Fail a failing node runs once', async () => {
		const result = await run({ nodes: [{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 1 } }] });
		expect(result.tries('Flaky')).toBe(1);
		expect(result.error?.message).toBe('Planned failure 1');
	});

	test('continueOnFail: the node returns the error as an item and the workflow goes on', async () => {
		const result = await run({
			nodes: [
				{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 9 }, continueOnFail: true },
				{ name: 'After', type: 'harness.noOp', parameters: {} },
			],
		});
		expect(result.error).toBeUndefined();
		expect(result.run.status).toBe('success');
		expect(result.output('After').map((item) => item.json)).toEqual([{ error: 'Planned failure 1' }]);
	});

	test('continueOnFail with a node that throws: the engine passes the input on and records the error', async () => {
		const result = await run({
			input: [{ id: 'kept' }],
			nodes: [
				{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 9, throwAlways: true }, continueOnFail: true },
				{ name: 'After', type: 'harness.noOp', parameters: {} },
			],
		});
		expect(result.error).toBeUndefined();
		expect(result.nodeError('Flaky')?.message).toBe('Planned failure 1');
		expect(result.output('After').map((item) => item.json)).toEqual([{ id: 'kept' }]);
	});

	test("onError 'continueErrorOutput' routes error items to the error output", async () => {
		const result = await run({
			nodes: [{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 9 }, onError: 'continueErrorOutput' }],
		});
		expect(result.error).toBeUndefined();
		const [success, failure] = result.outputs('Flaky');
		expect(success).toEqual([]);
		expect(failure.map((item) => item.json)).toEqual([{ error: 'Planned failure 1' }]);
		expect(result.output('Flaky')).toEqual([]);
	});

	test('Retry On Fail also retries a node that returned an error item', async () => {
		const result = await run({
			nodes: [
				{ name: 'Flaky', type: 'harnessTestFlaky', parameters: { failTimes: 1 }, continueOnFail: true, retryOnFail: true, maxTries: 2, waitBetweenTries: 1 },
			],
		});
		expect(result.tries('Flaky')).toBe(2);
		expect(result.output().map((item) => item.json)).toEqual([{ call: 2 }]);
	});
});

describe('cancellation', () => {
	const waitThenNoOp = [
		{ name: 'Wait', type: 'harnessTestWait', parameters: { ms: 20_000 } },
		{ name: 'After', type: 'harness.noOp', parameters: {} },
	];

	// Each cancels once its node is under way (an event, not a time: under load a fixed delay can come before the node).
	test('aborting the signal cancels the execution and the node sees its cancel signal', async () => {
		const controller = new AbortController();
		testNodeEvents.once('wait', () => controller.abort());
		const started = Date.now();
		const result = await run({ nodes: waitThenNoOp, signal: controller.signal });
		expect(Date.now() - started).toBeLessThan(3_000);
		expect(result.run.status).toBe('canceled');
		// sleepWithAbort rejected because getExecutionCancelSignal() fired.
		expect(result.nodeError('Wait')?.name).toBe('ManualExecutionCancelledError');
		expect(result.run.data.resultData.runData.After).toBeUndefined();
		expect(result.error?.message).toMatch(/cancel/i);
	});

	test('an already aborted signal cancels before any node runs', async () => {
		const result = await run({ nodes: waitThenNoOp, signal: AbortSignal.abort() });
		expect(result.run.status).toBe('canceled');
		expect(result.run.data.resultData.runData).toEqual({});
		expect(result.tries('Wait')).toBe(0);
	});

	test('timeoutMs cancels the execution like the workflow execution timeout', async () => {
		const started = Date.now();
		const result = await run({ nodes: waitThenNoOp, timeoutMs: 150 });
		expect(Date.now() - started).toBeGreaterThanOrEqual(140);
		expect(Date.now() - started).toBeLessThan(3_000);
		expect(result.run.status).toBe('canceled');
		expect(result.nodeError('Wait')?.name).toBe('ManualExecutionCancelledError');
		expect(result.run.data.resultData.runData.After).toBeUndefined();
	});

	test('a node that ignores the cancel signal makes runWorkflow reject after cancelGraceMs', async () => {
		const controller = new AbortController();
		testNodeEvents.once('wait', () => controller.abort());
		await expect(
			run({ nodes: [{ name: 'Deaf', type: 'harnessTestDeafWait', parameters: { ms: 400 } }], signal: controller.signal, cancelGraceMs: 100 }),
		).rejects.toThrow('did not stop within 100 ms after the signal aborted');
		// The next run waits for that execution to end instead of overlapping it.
		const next = await run({ nodes: [{ name: 'N', type: 'harness.noOp', parameters: {} }] });
		expect(next.run.status).toBe('success');
	});

	test('an HTTP request in flight is aborted too', async () => {
		const slow = await startTestServer(API_KEY, 1024, 20_000);
		const controller = new AbortController();
		// Once the request reached the server (it answers after 20 s): in flight for sure.
		const inFlight = setInterval(() => {
			if (slow.authorizations.length > 0) controller.abort();
		}, 10);
		try {
			const started = Date.now();
			const result = await run({
				nodes: [{ name: 'Request', type: 'harnessTestRequest', parameters: {}, credentials: true }],
				credentials: { baseUrl: slow.baseUrl, apiKey: API_KEY },
				signal: controller.signal,
			});
			expect(Date.now() - started).toBeLessThan(3_000);
			expect(result.run.status).toBe('canceled');
			expect(slow.authorizations).toHaveLength(1);
		} finally {
			clearInterval(inFlight);
			await slow.close();
		}
	});
});
