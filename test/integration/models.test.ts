import { VIDEO_MODEL_IDS } from '../../nodes/GenGatewayVideo/model/matrix';
import { runWorkflow } from '../harness/engine';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { findSecret } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-models-77aa' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const runModels = async (parameters: Record<string, unknown>, apiKey = mock.apiKey, extra = {}) =>
	await runWorkflow({
		nodes: [{ name: 'Models', type: 'genGatewayModels', parameters: { operation: 'getMany', ...parameters }, credentials: true, ...extra }],
		credentials: { baseUrl: `${mock.url}/v1/`, apiKey },
	});

describe('Models node against the mock', () => {
	it('lists every live model, one item each, with pairedItem', async () => {
		const result = await runModels({ returnAll: true });
		expect(result.error).toBeUndefined();
		const ids = result.output().map((item) => item.json.id);
		expect(ids).toEqual(expect.arrayContaining([...VIDEO_MODEL_IDS, 'gpt-4o-mini', 'img-1']));
		expect(result.output().every((item) => (item.pairedItem as { item: number }).item === 0)).toBe(true);
		// The base URL was given as ".../v1/": normalised, the request went to /v1/models once.
		expect((await mock.log()).map((e) => `${e.method} ${e.path}`)).toEqual(['GET /v1/models']);
		expect(findSecret(mock.apiKey, result.run, result.logs)).toEqual([]);
	});

	it('filters by id substring and limits', async () => {
		const filtered = await runModels({ returnAll: true, idContains: 'SD_2.0' });
		const ids = filtered.output().map((item) => item.json.id as string);
		expect(ids.length).toBeGreaterThan(0);
		expect(ids.every((id) => id.includes('sd_2.0'))).toBe(true);
		const limited = await runModels({ returnAll: false, limit: 3 });
		expect(limited.output()).toHaveLength(3);
	});

	it('retries 429 and 503 on the GET and succeeds', async () => {
		await mock.setFaults([
			{ path: '^/v1/models$', kind: 'status', status: 429, retryAfter: 1, times: 1 },
			{ path: '^/v1/models$', kind: 'status', status: 503, times: 1, skip: 1 },
		]);
		const result = await runModels({ returnAll: true });
		expect(result.error).toBeUndefined();
		expect((await mock.log()).map((e) => e.status)).toEqual([429, 503, 200]);
		expect(result.output().length).toBeGreaterThan(11);
	});

	it('a wrong key fails with the service message and the permissions hint; the key is nowhere', async () => {
		const wrongKey = 'wrong-key-should-never-leak-42';
		const result = await runModels({ returnAll: true }, wrongKey);
		const error = result.nodeError('Models') as Error & { description?: string; httpCode?: string };
		expect(error.message).toMatch(/^GET \/v1\/models failed with 403: /);
		expect(error.description).toMatch(/Check the API key's permissions/);
		expect(error.httpCode).toBe('403');
		expect(findSecret(wrongKey, result.run, result.logs, error)).toEqual([]);
	});

	it('malformed JSON, an HTML error page and an empty body give clear errors, not crashes', async () => {
		for (const [kind, pattern] of [
			['malformed-json', /not JSON/],
			['html', /HTML page/],
			['empty', /empty body/],
		] as const) {
			await mock.reset();
			await mock.setFaults([{ path: '^/v1/models$', kind, times: -1 }]);
			const result = await runModels({ returnAll: true });
			const error = result.nodeError('Models')!;
			expect(error.message).toMatch(pattern);
			expect(findSecret(mock.apiKey, error, result.logs)).toEqual([]);
		}
	}, 120_000);

	it('with Continue On Fail, an error item carries the message', async () => {
		const result = await runModels({ returnAll: true }, 'bad-key-0000', { continueOnFail: true });
		expect(result.error).toBeUndefined();
		expect(result.output()[0].json).toMatchObject({ error: expect.stringContaining('403'), httpCode: '403' });
	});
});
