// Time: about 4 s (about 60 runs of one node each, on loopback through a forward proxy).
/**
 * Issue 51, points 1-2, attacked as a hostile server and an odd user would (a helper's review of the fix): the key
 * reaches the base URL's origin only, whatever a Location or the Base URL looks like. A loopback forward proxy gives
 * made-up host names to one loopback server each (test/support/proxyServer.ts), so that a Location can point at a
 * sub-domain, a trailing-dot host, an IPv6 literal, port 80, another port or a host name that holds the key. Each case
 * asserts where the chain went (the WHATWG reading of the Location, which is also what is sent) and that an
 * Authorization header passed only to the base URL's origin and never once the chain had left it.
 * The first four groups held from the start. The last group is a second attack's findings, each of which failed
 * before b95f394 and asserts the invariant, not the old behaviour:
 * - F1: a Location host that holds the key is masked: no variant of the key in the error, run data or log;
 * - F2: a followed redirect whose body never ends has its connection closed after the run (waited for, with a cap);
 * - F3: a file host's own chain is followed without the key, at most 5 hops, a Location's user info dropped
 *   (no Authorization, so no Basic, on the file host);
 * - F4: an Image URL under a Base URL written in upper case or with :80 is recognised as under it: key, download.
 */
import type { ServerResponse } from 'node:http';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { runWorkflow } from '../harness/engine';
import { setupCoreServices } from '../harness/services';
import { chatParams, drip, imageParams, keyLeaks, keyVariants, mp4File, nodeRun, pngFile } from '../support/hostileServers';
import { loadOptionsContext, pickerIds } from '../support/loadOptions';
import { useProxyEnv } from '../support/proxyEnv';
import { startTestProxy } from '../support/proxyServer';
import type { ProxyLogEntry, TestProxy } from '../support/proxyServer';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedRequest, ScriptedServer } from '../support/scriptedServer';

const KEY = 'sk-key-origin-attack-5e4d3c';
const BASE = 'http://gw.test:7001';
// The last is a host name that holds the key, as a hostile server may write it into a Location.
const HOSTS = ['gw.test:7001', 'files.gw.test:7001', 'sub.files.gw.test:7001', 'evil.test:7001', 'gw.test:7002', 'gw.test.:7001', '[::1]:7001', 'gw.test', `${KEY}.evil.test:7001`];
const PNG = pngFile(300, 4);
const MP4 = mp4File(900, 6);
const CONTENT = '/v1/tasks/task_1/artifacts/video/content';
const MODELS = { type: 'genGatewayModels', parameters: { operation: 'getMany', returnAll: true } };
const IMAGE = { type: 'genGatewayImage', parameters: imageParams('a fox', { responseFormat: 'url' }) };
const VIDEO = { type: 'genGatewayVideo', parameters: { operation: 'download', taskId: 'task_1' } };

/** What a server saw: its host name, the path, the Authorization and Cookie headers. */
interface Seen {
	host: string;
	path: string;
	authorization?: string;
	cookie?: string;
}
type Route = (req: ScriptedRequest, res: ServerResponse, host: string, path: string) => void;

let proxy: TestProxy;
let restoreEnv: () => void;
const servers: ScriptedServer[] = [];
const seen: Seen[] = [];
let route: Route = (_req, res) => sendJson(res, 500, {});

beforeAll(async () => {
	setupCoreServices();
	const hosts: Record<string, string> = {};
	for (const host of HOSTS) {
		const server = await startScriptedServer((req, res) => {
			seen.push({ host, path: req.path, authorization: req.headers.authorization, cookie: req.headers.cookie });
			route(req, res, host, req.path.split('?')[0]);
		});
		servers.push(server);
		hosts[host] = new URL(server.url).host;
	}
	proxy = await startTestProxy(hosts);
	restoreEnv = useProxyEnv(proxy.url);
});
afterAll(async () => {
	restoreEnv?.();
	await proxy?.close();
	for (const server of servers) await server.close();
});

const redirect = (res: ServerResponse, location: string, status = 302) => void res.writeHead(status, { location }).end();

/** `first` decides what it answers (it writes the answer); anything else is answered as a plain service would. */
function serve(first: (req: ScriptedRequest, res: ServerResponse, host: string, path: string) => boolean, imageUrl = `${BASE}/files/a.png`) {
	proxy.log.length = 0;
	seen.length = 0;
	route = (req, res, host, path) => {
		if (first(req, res, host, path)) return;
		if (req.method === 'POST') return sendJson(res, 200, { created: 1, data: [{ url: imageUrl }] });
		if (path.endsWith('/artifacts')) return sendJson(res, 200, [{ key: 'video', type: 'video', mime_type: 'video/mp4' }]);
		if (path.endsWith('.png')) return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG);
		if (path.endsWith('.mp4')) return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': MP4.length }).end(MP4);
		sendJson(res, 200, { object: 'list', data: [{ id: `m-${host}`, object: 'model' }] });
	};
}

const originOf = (entry: ProxyLogEntry) => (entry.method === 'CONNECT' ? `https://${entry.url}` : new URL(entry.url).origin);

/** The invariant: a key only to `baseOrigin`, and none once the chain (from `from` on in the log) had left it. */
function keyedElsewhere(baseOrigin: string, from = 0): string[] {
	let left = false;
	const bad: string[] = [];
	for (const entry of proxy.log.slice(from)) {
		if (entry.forwardedAuthorization && (left || originOf(entry) !== baseOrigin)) bad.push(`${entry.method} ${entry.url}`);
		left ||= originOf(entry) !== baseOrigin;
	}
	return bad;
}
const trail = () => proxy.log.map((entry) => `${originOf(entry)} ${entry.forwardedAuthorization ? 'key' : '-'}`);

describe('a Location, however it is written, is read as WHATWG reads it; the key goes with a hop on the base origin only', () => {
	// [Location, the origin the hop lands on (undefined: not followed)]
	const spellings: Array<[string, string | undefined]> = [
		['http:\\\\evil.test:7001\\x', 'http://evil.test:7001'],
		['/\\evil.test:7001/x', 'http://evil.test:7001'],
		['\\\\evil.test:7001/x', 'http://evil.test:7001'],
		['//evil.test:7001/x', 'http://evil.test:7001'],
		['///evil.test:7001/x', 'http://evil.test:7001'],
		['http:evil.test:7001/x', BASE],
		['http://gw.test:7001@evil.test:7001/x', 'http://evil.test:7001'],
		['http://gw.test:7001%2F@evil.test:7001/', 'http://evil.test:7001'],
		['http://evil.test:7001\t@gw.test:7001/x', BASE],
		['http://gw.test:7001\\@evil.test:7001/', BASE],
		['http://evil.test:7001#@gw.test:7001/', 'http://evil.test:7001'],
		['http://evil.test:7001?@gw.test:7001/', 'http://evil.test:7001'],
		['http://ev\til.test:7001/x', 'http://evil.test:7001'],
		['HTTP://EVIL.TEST:7001/x', 'http://evil.test:7001'],
		['http://evil%2Etest:7001/x', 'http://evil.test:7001'],
		['http://FILES.gw.test:7001/x', 'http://files.gw.test:7001'],
		['http://gw.test.:7001/x', 'http://gw.test.:7001'],
		['http://[::1]:7001/x', 'http://[::1]:7001'],
		['http://gw.test:7002/x', 'http://gw.test:7002'],
		['http://gw.test:80/x', 'http://gw.test'],
		['https://gw.test:7001/x', 'https://gw.test:7001'],
		['http://GW.TEST:07001/x', BASE],
		['http://gw.te%73t:7001/x', BASE],
		['http://user:pass@gw.test:7001/x', BASE],
		['  http://evil.test:7001/x  ', 'http://evil.test:7001'],
		['http://gw.test:7001:7001/x', undefined],
		['data:text/plain,hi', undefined],
		['ftp://gw.test:7001/x', undefined],
	];

	it.each(spellings)('Location %j lands on %s', async (location, lands) => {
		serve((_req, res, host, path) => host === 'gw.test:7001' && path === '/v1/models' && (redirect(res, location), true));
		const result = await runWorkflow(nodeRun(BASE, KEY, MODELS));
		expect(trail()).toEqual([`${BASE} key`, ...(lands === undefined ? [] : [`${lands} ${lands === BASE ? 'key' : '-'}`])]);
		expect(keyedElsewhere(BASE)).toEqual([]);
		// A hop on the base origin carries the key itself, never user info from the Location.
		expect(seen.filter((s) => s.authorization !== undefined && s.authorization !== `Bearer ${KEY}`)).toEqual([]);
		expect(await keyLeaks(result, keyVariants(KEY))).toEqual([]);
	});
});

describe('the Base URL, however it is written: relative hop, then a sub-domain, then back to the base origin', () => {
	// [Base URL, its origin, the host name that serves it]
	const bases: Array<[string, string, string]> = [
		['http://GW.TEST:7001', BASE, 'gw.test:7001'],
		['HTTP://gw.test:7001', BASE, 'gw.test:7001'],
		['http://gw.test:7001/v1', BASE, 'gw.test:7001'],
		['http://gw.test:7001/V1//', BASE, 'gw.test:7001'],
		['http://gw.test:7001/api', BASE, 'gw.test:7001'],
		['  http://gw.test:7001/  ', BASE, 'gw.test:7001'],
		['http://gw.test.:7001', 'http://gw.test.:7001', 'gw.test.:7001'],
		['http://gw.test:80', 'http://gw.test', 'gw.test'],
	];

	it.each(bases)('base %j', async (base, origin, host) => {
		serve((_req, res, at, path) => {
			if (at === host && path.endsWith('/v1/models')) return redirect(res, '/hop/1'), true;
			if (at === host && path === '/hop/1') return redirect(res, 'http://files.gw.test:7001/hop/2', 307), true;
			if (path === '/hop/2') return redirect(res, `${origin}/hop/3`, 308), true;
			return false;
		});
		const result = await runWorkflow(nodeRun(base, KEY, MODELS));
		expect(result.error).toBeUndefined();
		expect(trail()).toEqual([`${origin} key`, `${origin} key`, 'http://files.gw.test:7001 -', `${origin} -`]);
		expect(keyedElsewhere(origin)).toEqual([]);
	});
});

describe('media downloads', () => {
	it("the Video content's redirect: base, a file on the base origin, a sub-domain, back, a sub-sub-domain", async () => {
		serve((_req, res, host, path) => {
			if (host === 'gw.test:7001' && path === CONTENT) return redirect(res, '/signed/1'), true;
			if (host === 'gw.test:7001' && path === '/signed/1') return redirect(res, 'http://files.gw.test:7001/2'), true;
			if (host === 'files.gw.test:7001' && path === '/2') return redirect(res, `${BASE}/3`, 307), true;
			if (host === 'gw.test:7001' && path === '/3') return redirect(res, 'http://sub.files.gw.test:7001/v.mp4', 308), true;
			return false;
		});
		const result = await runWorkflow(nodeRun(BASE, KEY, VIDEO));
		expect(result.error).toBeUndefined();
		expect(trail().slice(1)).toEqual([`${BASE} key`, `${BASE} key`, 'http://files.gw.test:7001 -', `${BASE} -`, 'http://sub.files.gw.test:7001 -']);
		expect(keyedElsewhere(BASE, 1)).toEqual([]);
	});

	it("the Video content's redirect to a sub-domain that sends it back to the base origin", async () => {
		serve((_req, res, host, path) => {
			if (host === 'gw.test:7001' && path === CONTENT) return redirect(res, 'http://files.gw.test:7001/2'), true;
			if (host === 'files.gw.test:7001') return redirect(res, `${BASE}/v1/back.mp4`, 307), true;
			return false;
		});
		const result = await runWorkflow(nodeRun(BASE, KEY, VIDEO));
		expect(result.error).toBeUndefined();
		expect(trail().slice(1)).toEqual([`${BASE} key`, 'http://files.gw.test:7001 -', `${BASE} -`]);
	});

	it('an Image URL on a sub-domain that redirects to the base origin: no key there', async () => {
		serve((_req, res, host) => host === 'files.gw.test:7001' && (redirect(res, `${BASE}/files/back.png`), true), 'http://files.gw.test:7001/a.png');
		const result = await runWorkflow(nodeRun(BASE, KEY, IMAGE));
		expect(result.error).toBeUndefined();
		expect(trail()).toEqual([`${BASE} key`, 'http://files.gw.test:7001 -', `${BASE} -`]);
	});

	it('an Image URL on the base origin but outside the base path: no key (the key goes with URLs under the base URL)', async () => {
		serve(() => false, `${BASE}/files/a.png`);
		const result = await runWorkflow(nodeRun(`${BASE}/api`, KEY, IMAGE));
		expect(result.error).toBeUndefined();
		expect(seen.map((s) => [s.path, s.authorization !== undefined])).toEqual([
			['/api/v1/images/generations', true],
			['/files/a.png', false],
		]);
	});
});

describe('other ways a chain could carry the key', () => {
	it('a cookie the base origin sets is sent nowhere (n8n keeps no cookie jar)', async () => {
		serve((_req, res, host, path) => {
			if (host !== 'gw.test:7001' || path !== '/v1/models') return false;
			res.writeHead(302, { location: 'http://files.gw.test:7001/x', 'set-cookie': `session=${KEY}; Domain=gw.test; Path=/` }).end();
			return true;
		});
		await runWorkflow(nodeRun(BASE, KEY, MODELS));
		expect(seen.map((s) => s.cookie)).toEqual([undefined, undefined]);
	});

	it('a loop between two origins ends after 5 redirects, the key on the first request only', async () => {
		serve((_req, res, host) => (redirect(res, host === 'gw.test:7001' ? 'http://files.gw.test:7001/a' : `${BASE}/v1/models`), true));
		const result = await runWorkflow(nodeRun(BASE, KEY, MODELS));
		expect(result.nodeError('Node')?.message).toMatch(/redirects lead nowhere usable .*ERR_FR_TOO_MANY_REDIRECTS/);
		expect(proxy.log.map((entry) => entry.forwardedAuthorization)).toEqual([true, false, false, false, false, false]);
	});

	it.each([303, 307])('a paid POST answered %i to a sub-domain is not followed, and the key in its query is masked', async (status) => {
		serve((_req, res, host) => host === 'gw.test:7001' && (redirect(res, `http://files.gw.test:7001/v1/chat/completions?k=${KEY}`, status), true));
		const result = await runWorkflow(nodeRun(BASE, KEY, { type: 'genGatewayChat', parameters: chatParams('hi', 'never') }));
		expect(seen.map((s) => s.host)).toEqual(['gw.test:7001']);
		expect(result.nodeError('Node')?.message).toMatch(/outcome of POST \/v1\/chat\/completions is unknown/);
		expect(await keyLeaks(result, keyVariants(KEY))).toEqual([]);
	});

	it("the editor's model picker (loadOptions): base, a sub-domain, back to the base origin", async () => {
		serve((_req, res, host, path) => {
			if (host === 'gw.test:7001' && path === '/v1/models') return redirect(res, 'http://files.gw.test:7001/list'), true;
			if (host === 'files.gw.test:7001') return redirect(res, `${BASE}/v1/models2`, 307), true;
			return false;
		});
		const ids = await pickerIds(new GenGatewayChat(), loadOptionsContext('genGatewayChat', BASE, KEY));
		expect(ids).toEqual(['m-gw.test:7001']);
		expect(trail()).toEqual([`${BASE} key`, 'http://files.gw.test:7001 -', `${BASE} -`]);
	});
});

/** Whether `res`'s connection closes within `capMs` (generous: a prompt close takes milliseconds, none never comes). */
const closes = (res: ServerResponse, capMs: number) =>
	new Promise<boolean>((resolve) => {
		if (res.socket === null || res.socket.destroyed) return resolve(true);
		const cap = setTimeout(() => resolve(false), capMs);
		res.once('close', () => (clearTimeout(cap), resolve(true)));
	});

describe('the findings of the attack on points 1-2, mended in b95f394 (each case failed before)', () => {
	it.each([
		['Models, a redirect to it ("It was redirected to ...")', MODELS, '/v1/models', 401],
		['Video content, its file URL there refused ("... has expired or is gone")', VIDEO, CONTENT, 404],
	])('F1 %s: a host name that holds the key is masked in the error, run data and log', async (_name, node, from, status) => {
		serve((_req, res, host, path) => {
			if (host === 'gw.test:7001' && path === from) return redirect(res, `http://${KEY}.evil.test:7001/v.mp4?sig=1`), true;
			if (host.endsWith('evil.test:7001')) return sendJson(res, status, { error: { message: 'no' } }), true;
			return false;
		});
		const result = await runWorkflow(nodeRun(BASE, KEY, node));
		// The node did stop on that host's answer (what would have named the host), without the key anywhere.
		expect(result.nodeError('Node')).toBeDefined();
		expect(seen.map((s) => s.host).slice(-1)).toEqual([`${KEY}.evil.test:7001`]);
		expect(keyedElsewhere(BASE)).toEqual([]);
		expect(await keyLeaks(result, keyVariants(KEY))).toEqual([]);
	});

	it.each([
		['an Image URL under the base URL', IMAGE, '/files/a.png', '/files/b.png'],
		['the Video content, via a file URL on the base origin', VIDEO, '/v1/signed', 'http://files.gw.test:7001/v.mp4'],
	])("F2 %s: a followed 302 whose body never ends has its connection closed after the run", async (_name, node, redirecting, location) => {
		const endless: ServerResponse[] = [];
		serve((_req, res, host, path) => {
			if (host === 'gw.test:7001' && path === CONTENT) return redirect(res, '/v1/signed'), true;
			if (host !== 'gw.test:7001' || path !== redirecting) return false;
			res.writeHead(302, { location, 'content-type': 'text/plain' });
			drip(res, () => ' ', 50);
			endless.push(res);
			return true;
		});
		try {
			const result = await runWorkflow(nodeRun(BASE, KEY, node));
			expect(result.error).toBeUndefined();
			expect(endless).toHaveLength(1);
			// Through the proxy: the client's socket closed, so the proxy's upstream one did too.
			expect(await Promise.all(endless.map((res) => closes(res, 15_000)))).toEqual([true]);
		} finally {
			for (const res of endless) res.destroy();
		}
	}, 60_000);

	it("F3 a file host's own redirect chain: at most 5 hops, no key, the node says the redirects lead nowhere", async () => {
		let n = 0;
		serve((_req, res, host) => host === 'files.gw.test:7001' && (redirect(res, `/a${++n}.png`), true), 'http://files.gw.test:7001/a.png');
		const result = await runWorkflow(nodeRun(BASE, KEY, IMAGE));
		const onFiles = seen.filter((s) => s.host === 'files.gw.test:7001');
		expect(onFiles.length).toBeGreaterThan(1);
		expect(onFiles.length).toBeLessThanOrEqual(6);
		expect(onFiles.map((s) => s.authorization)).toEqual(onFiles.map(() => undefined));
		expect(result.nodeError('Node')?.message).toMatch(/redirects lead nowhere usable/);
		expect(keyedElsewhere(BASE)).toEqual([]);
		expect(await keyLeaks(result, keyVariants(KEY))).toEqual([]);
	});

	it("F3 user info in the Video content redirect's Location is dropped: no Authorization (Basic) on the file host", async () => {
		serve((_req, res, host, path) => host === 'gw.test:7001' && path === CONTENT && (redirect(res, 'http://user:pw@files.gw.test:7001/v.mp4'), true));
		const result = await runWorkflow(nodeRun(BASE, KEY, VIDEO));
		expect(result.error).toBeUndefined();
		expect(seen.filter((s) => s.host === 'files.gw.test:7001').map((s) => [s.path, s.authorization])).toEqual([['/v.mp4', undefined]]);
		expect(keyedElsewhere(BASE)).toEqual([]);
	});

	it.each([
		['http://GW.TEST:7001', 'http://gw.test:7001/files/a.png', 'gw.test:7001'],
		['http://gw.test:80', 'http://gw.test/files/a.png', 'gw.test'],
	])('F4 base URL %s: the Image URL %s under it gets the key and downloads', async (base, file, host) => {
		serve((req, res, at, path) => at === host && path === '/files/a.png' && !req.headers.authorization && (sendJson(res, 401, { error: { message: 'key needed' } }), true), file);
		const result = await runWorkflow(nodeRun(base, KEY, IMAGE));
		expect(result.nodeError('Node')?.message).toBeUndefined();
		expect(seen.map((s) => [s.host, s.path, s.authorization])).toEqual([
			[host, '/v1/images/generations', `Bearer ${KEY}`],
			[host, '/files/a.png', `Bearer ${KEY}`],
		]);
		expect(result.outputs('Node')[0]?.[0]?.binary).toBeDefined();
	});
});
