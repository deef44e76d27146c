// Time: about 4 s (60 runs of one node each, on loopback through a forward proxy).
/**
 * Issue 51, point 1, as a property on n8n's real engine: the key reaches the base URL's origin only. A loopback
 * forward proxy (n8n's proxy environment) gives made-up host names to three loopback servers, so that the base URL
 * `http://gw.test:7001` has a sub-domain (`files.gw.test:7001`), another port (`gw.test:7002`) and another host
 * (`other.test:7001`) to redirect to. Generated: the read (the model list, a video task's status, the Image node's
 * download of a file URL under the base URL, a video's content), a chain of up to five redirects between the four
 * origins (and back), each absolute or relative, with 301/302/303/307/308. The proxy notes for every request whether
 * an Authorization header passed: one did only to the base URL's origin, and never after the chain left it. Every run
 * ends with its read done (the chain is followed, with or without the key).
 */
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';

import { runWorkflow } from '../harness/engine';
import { checkProperty, imageParams, mp4File, nodeRun, pngFile } from '../support/hostileServers';
import { useProxyEnv } from '../support/proxyEnv';
import { startTestProxy } from '../support/proxyServer';
import type { TestProxy } from '../support/proxyServer';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';

const KEY = 'sk-origin-only-7d6c5b4a39';
const PNG = pngFile(300, 4);
const MP4 = mp4File(900, 6);

/** The four origins; the first is the base URL's. */
const ORIGINS = ['http://gw.test:7001', 'http://files.gw.test:7001', 'http://gw.test:7002', 'http://other.test:7001'] as const;
const BASE = ORIGINS[0];

interface Hop {
	/** Index into ORIGINS. */
	to: number;
	relative: boolean;
	status: 301 | 302 | 303 | 307 | 308;
}
type Read = 'models' | 'status' | 'imageUrl' | 'videoContent';
interface Case {
	read: Read;
	hops: Hop[];
	/** The chain's end, on another origin, refuses a request without a key (401), as a moved service would. */
	foreignRefuses?: boolean;
}

const hop: fc.Arbitrary<Hop> = fc.record({
	to: fc.integer({ min: 0, max: ORIGINS.length - 1 }),
	relative: fc.boolean(),
	status: fc.constantFrom(301, 302, 303, 307, 308),
});
const cases: fc.Arbitrary<Case> = fc.record({
	read: fc.constantFrom<Read>('models', 'status', 'imageUrl', 'videoContent'),
	hops: fc.array(hop, { maxLength: 5 }),
});

const NODES = {
	models: { type: 'genGatewayModels', parameters: { operation: 'getMany', returnAll: true } },
	status: { type: 'genGatewayVideo', parameters: { operation: 'getStatus', taskId: 'task_1' } },
	imageUrl: { type: 'genGatewayImage', parameters: imageParams('a fox', { responseFormat: 'url' }) },
	videoContent: { type: 'genGatewayVideo', parameters: { operation: 'download', taskId: 'task_1' } },
} as const;

/** The path that starts a case's chain (the read's own), and what the chain's last hop answers. */
const FIRST_PATH: Record<Read, string> = {
	models: '/v1/models',
	status: '/v1/tasks/task_1',
	imageUrl: '/files/a.png',
	videoContent: '/v1/tasks/task_1/artifacts/video/content',
};
function finalAnswer(read: Read, res: ServerResponse): void {
	if (read === 'models') return sendJson(res, 200, { object: 'list', data: [{ id: 'm-1', object: 'model' }] });
	if (read === 'status') return sendJson(res, 200, { task_id: 'task_1', status: 'IN_PROGRESS', progress: '10%' });
	const file = read === 'imageUrl' ? PNG : MP4;
	res.writeHead(200, { 'content-type': read === 'imageUrl' ? 'image/png' : 'video/mp4', 'content-length': file.length });
	res.end(file);
}

let proxy: TestProxy;
let restoreEnv: () => void;
const servers: ScriptedServer[] = [];
let current: Case = { read: 'models', hops: [] };

/** Every server answers alike: the case's chain by hop number (`/hop/N`), the read's other requests as a service. */
function answer(req: ScriptedRequest, res: ServerResponse): void {
	const path = req.path.split('?')[0];
	if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: `${BASE}/files/a.png` }] });
	if (path.endsWith('/artifacts')) return sendJson(res, 200, [{ key: 'video', type: 'video', mime_type: 'video/mp4' }]);
	const hopMatch = /^\/hop\/(\d+)$/.exec(path);
	const step = hopMatch ? Number(hopMatch[1]) : path === FIRST_PATH[current.read] ? 0 : undefined;
	if (step === undefined) return sendJson(res, 404, { error: { message: `no route ${path}` } });
	const next = current.hops[step];
	if (!next) {
		if (current.foreignRefuses && !req.headers.authorization) return sendJson(res, 401, { error: { message: 'no key' } });
		return finalAnswer(current.read, res);
	}
	const where = `/hop/${step + 1}`;
	res.writeHead(next.status, { location: next.relative ? where : `${ORIGINS[next.to]}${where}` }).end();
}

beforeAll(async () => {
	for (let i = 0; i < 3; i++) servers.push(await startScriptedServer(answer));
	const upstream = (i: number) => new URL(servers[i].url).host;
	proxy = await startTestProxy({
		'gw.test:7001': upstream(0),
		'files.gw.test:7001': upstream(1),
		'gw.test:7002': upstream(2),
		'other.test:7001': upstream(2),
	});
	restoreEnv = useProxyEnv(proxy.url);
});
afterAll(async () => {
	restoreEnv?.();
	await proxy?.close();
	for (const server of servers) await server.close();
});

/** The origin each hop of the chain lands on: a relative Location stays where the chain is. */
function landings(c: Case): string[] {
	const origins: string[] = [];
	let at: string = BASE;
	for (const next of c.hops) {
		if (!next.relative) at = ORIGINS[next.to];
		origins.push(at);
	}
	return origins;
}

describe('the key reaches the base URL origin only (generated redirect chains, n8n engine, through a proxy)', () => {
	it('holds for every read and chain', async () => {
		await checkProperty(
			cases,
			async (c) => {
				current = c;
				proxy.log.length = 0;
				const result = await runWorkflow(nodeRun(BASE, KEY, NODES[c.read]));
				expect(result.error).toBeUndefined();
				const chainStart = proxy.log.findIndex((entry) => new URL(entry.url).pathname === FIRST_PATH[c.read]);
				const chain = proxy.log.slice(chainStart);
				expect(chain.map((entry) => new URL(entry.url).origin)).toEqual([BASE, ...landings(c)]);
				// The invariant: the key only to the base URL's origin, and never once the chain has left it.
				let left = false;
				for (const entry of proxy.log) {
					const origin = new URL(entry.url).origin;
					left ||= origin !== BASE;
					if (entry.forwardedAuthorization) expect({ url: entry.url, left }).toEqual({ url: entry.url, left: false });
					if (entry.forwardedAuthorization) expect(origin).toBe(BASE);
				}
				// Liveness: requests on the base URL's origin before the chain left it carry the key.
				const keyedPrefix = chain.findIndex((entry) => new URL(entry.url).origin !== BASE);
				for (const entry of keyedPrefix === -1 ? chain : chain.slice(0, keyedPrefix)) {
					expect(entry.forwardedAuthorization).toBe(true);
				}
			},
			{ numRuns: 60 },
		);
	});

	it('a redirect to a sub-domain: the key is not sent there (failed before issue 51: it was)', async () => {
		current = { read: 'status', hops: [{ to: 1, relative: false, status: 302 }] };
		proxy.log.length = 0;
		const result = await runWorkflow(nodeRun(BASE, KEY, NODES.status));
		expect(result.error).toBeUndefined();
		expect(proxy.log.map((entry) => [new URL(entry.url).host, entry.forwardedAuthorization])).toEqual([
			['gw.test:7001', true],
			['files.gw.test:7001', false],
		]);
	});

	it('a refusal after a redirect to another origin says where it went and that the key was not sent', async () => {
		current = { read: 'models', hops: [{ to: 3, relative: false, status: 301 }], foreignRefuses: true };
		const result = await runWorkflow(nodeRun(BASE, KEY, NODES.models));
		const error = result.nodeError('Node') as Error & { description?: string };
		expect(`${error.message} ${error.description}`).toMatch(
			/redirected to http:\/\/other\.test:7001, another origin than the base URL's: the API key is sent to the base URL's origin only/,
		);
	});
});

describe('a base URL with a user name or password (found by an attack on issue 51)', () => {
	it('is refused before anything is sent, naming the field (n8n would send them as Basic in place of the key)', async () => {
		const server = await startScriptedServer((_req, res) => sendJson(res, 200, { object: 'list', data: [] }));
		proxy.log.length = 0;
		try {
			const result = await runWorkflow(nodeRun(server.url.replace('http://', 'http://user:pw@'), KEY, NODES.models));
			const error = result.nodeError('Node') as Error & { description?: string };
			expect(error.message).toBe("The credential's Base URL holds a user name or password");
			expect(error.description).toMatch(/^Remove "user:password@" from the Base URL/);
			expect(server.requests).toEqual([]);
			expect(proxy.log).toEqual([]);
		} finally {
			await server.close();
		}
	});
});
