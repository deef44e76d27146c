/**
 * Requests go through n8n's HTTP helper, so they honour n8n's proxy settings (HTTP_PROXY and friends): proven once
 * with a loopback forward proxy and a host name that only the proxy can resolve.
 */
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { entriesOf, generateParams, runModels } from '../support/faultTable';
import { useProxyEnv } from '../support/proxyEnv';
import { startTestProxy } from '../support/proxyServer';
import type { TestProxy } from '../support/proxyServer';
import { findSecret, runVideo, sha256 } from '../support/videoRun';

const API_KEY = 'sentinel-key-proxy-5a6b7c8d';
/** Not in any DNS or hosts file: reachable only because the proxy maps it to the mock. */
const HIDDEN_HOST = 'mock.gen-gateway.test';

let mock: MockClient;
let proxy: TestProxy;
let restoreEnv: () => void;
let hiddenMock: MockClient;

beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: API_KEY });
	const { port } = new URL(mock.url);
	proxy = await startTestProxy({ [HIDDEN_HOST]: `127.0.0.1:${port}` });
	restoreEnv = useProxyEnv(proxy.url);
	hiddenMock = { ...mock, url: `http://${HIDDEN_HOST}:${port}` };
});
afterAll(async () => {
	restoreEnv?.();
	await proxy?.close();
	await mock?.stop();
});
beforeEach(async () => {
	await mock.reset();
	proxy.log.length = 0;
});

describe('through an HTTP proxy (n8n proxy environment)', () => {
	it('the Models node lists models through the proxy, the key reaching the service but no log', async () => {
		const result = await runModels(hiddenMock);
		expect(result.error).toBeUndefined();
		expect(result.output().length).toBeGreaterThan(11);
		expect(proxy.log).toEqual([
			{ method: 'GET', url: `${hiddenMock.url}/v1/models`, forwardedAuthorization: true, status: 200 },
		]);
		// The mock accepted the key that travelled through the proxy.
		expect((await mock.log()).map((e) => [e.path, e.authorized])).toEqual([['/v1/models', true]]);
		expect(findSecret(API_KEY, result.run, result.logs, proxy.log, await mock.log())).toEqual([]);
	});

	it('a Video generate-and-download goes through the proxy, the bytes arrive intact', async () => {
		const result = await runVideo(hiddenMock, generateParams('[[instant]] [[size=1M]] via proxy'));
		try {
			expect(result.error).toBeUndefined();
			const [item] = result.output();
			const taskId = item.json.task_id as string;
			expect(sha256(await result.readBinary(item))).toBe(await mock.artifactSha256(taskId));

			const base = hiddenMock.url;
			expect(proxy.log.map((e) => `${e.status} ${e.method} ${e.url}`)).toEqual([
				`200 POST ${base}/v1/tasks/vendor`,
				`200 GET ${base}/v1/tasks/${taskId}`,
				`200 GET ${base}/v1/tasks/${taskId}/artifacts`,
				`200 GET ${base}/v1/tasks/${taskId}/artifacts/video/content`,
			]);
			expect(proxy.log.every((e) => e.forwardedAuthorization)).toBe(true);
			const log = await mock.log();
			expect(log.every((e) => e.authorized)).toBe(true);
			expect(entriesOf(log, 'content')[0].bytes).toBe(1024 * 1024);
			expect(findSecret(API_KEY, result.run, result.logs, proxy.log, log)).toEqual([]);
		} finally {
			await result.cleanup();
		}
	});
});
