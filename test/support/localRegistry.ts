/**
 * A real npm registry on loopback for tests: Verdaccio (pinned in test/release/tools) with no uplinks, so nothing it
 * serves or asks for leaves the machine (unless a test asks for the redirecting uplink, see `uplink`). Used by the release rehearsal (test/release/) to publish as the workflow
 * does, and by the editor e2e to stand in for n8n's default registry (over TLS, on the host and port that registry
 * has, with a certificate from a CA the test made).
 *
 *   const registry = await startLocalRegistry();                  // http://127.0.0.1:<free port>/
 *   await registry.publish('/tmp/n8n-nodes-gen-gateway-0.1.0.tgz');
 *   execFileSync('npm', ['install', 'n8n-nodes-gen-gateway', '--userconfig', registry.userconfig], ...);
 *   await registry.stop();
 *
 *   const tlsRegistry = await startLocalRegistry({ host: '127.0.0.1', port: 443, tls: { key, cert, ca } });
 *
 * Verdaccio 6.10.4 is not a devDependency of the package: its verdaccio-audit asks for node-fetch's `cjs` dist-tag,
 * which the registry does not carry, and the override that fixes it is a field n8n's lint forbids in a community
 * package's package.json. It lives in test/release/tools/ (package.json + lockfile, with npm 10.9.2 for the lock
 * check), installed once by ensureReleaseTools() into the n8n cache folder, like n8n itself (scripts/install-n8n.sh).
 * Verdaccio needs Node 22 or later: it runs on the Node 24 that scripts/install-n8n.sh fetches for n8n 2.x (or on this
 * process's Node when that is new enough). Publishing needs a user: startLocalRegistry registers one and keeps its
 * token; `userconfig` is an npmrc file naming the registry and that token (and the CA, with TLS).
 */
import type { ChildProcess } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import * as os from 'os';
import * as path from 'path';

import { ensureN8n } from '../e2e/support/install';
import { cleanNpmEnv } from '../e2e/support/packageInstall';
import { REPO_ROOT } from '../e2e/support/paths';
import { freePort, killGroup, runProcess, spawnGroup, type ProcessResult } from '../e2e/support/process';

export interface LocalRegistryOptions {
	/** Address to listen on. Default 127.0.0.1. */
	host?: string;
	/** Port. Default: a free one. */
	port?: number;
	/**
	 * Serve HTTPS with this key and certificate (PEM text). `ca` (PEM text of the CA that signed `cert`) goes into
	 * `userconfig` as npm's cafile, and is trusted by this module's own requests.
	 */
	tls?: { key: string; cert: string; ca?: string };
	/**
	 * The registry's address as clients name it, e.g. `https://<name of n8n's default registry>/` when that name resolves
	 * to `host` for them. Default: `http(s)://<host>:<port>/`. Verdaccio writes tarball addresses from the request's
	 * Host header, so clients must reach it by this name too.
	 */
	publicUrl?: string;
	/** Storage folder (kept by stop()). Default: a fresh temporary folder, removed by stop(). */
	storageDir?: string;
	/** A Node 22+ executable to run Verdaccio with. Default: this process's Node if 22+, else n8n 2.x's Node 24. */
	nodeBin?: string;
	/**
	 * Default none: nothing leaves loopback. With an uplink, a small front on `host:port` answers every request for a
	 * package not named in `localOnly` with a redirect to the same path on `url`, and hands everything else (the
	 * `localOnly` packages, publishes, /-/ endpoints) to Verdaccio on a port of its own. So the registry can stand in
	 * for a public one that a whole `npm ci` installs from, while the `localOnly` packages exist only here and a
	 * publish of them goes nowhere else. (Verdaccio's own uplink proxying took 233 s for this project's `npm ci`, a
	 * direct install 80 s.) HTTP only.
	 */
	uplink?: { url: string; localOnly: string[] };
}

export interface LocalRegistry {
	/** The registry's address, ending with `/` (publicUrl when given). */
	url: string;
	/** The address this process reaches it by (http(s)://host:port/). */
	directUrl: string;
	/** Token of the registry's one user, who may publish. */
	token: string;
	/** The lines of `userconfig`: registry, the token for it, the CA file with TLS. */
	npmrcLines: string[];
	/** An npmrc file with npmrcLines, for `npm --userconfig <file>` (publish, install, view). */
	userconfig: string;
	/** Folder with Verdaccio's config and, unless storageDir was given, its storage. */
	dir: string;
	/** `npm publish <tarball>` to this registry (no provenance: there is no CI provider here). */
	publish(tarball: string, options?: { tag?: string; env?: NodeJS.ProcessEnv }): Promise<ProcessResult>;
	/** The versions of a package the registry holds (empty when it has none). */
	versions(name: string): Promise<string[]>;
	/** The packument, as npm clients get it (404 → undefined). */
	packument(name: string): Promise<any | undefined>; // eslint-disable-line @typescript-eslint/no-explicit-any
	/** Everything Verdaccio printed. */
	logs(): string;
	stop(): Promise<void>;
}

/** Where the release tools' package.json and lockfile are (what ensureReleaseTools installs). */
export const RELEASE_TOOLS_HOST = path.join(REPO_ROOT, 'test', 'release', 'tools');

export interface ReleaseTools {
	/** The install folder (…/gen-gateway-n8n/release-tools). */
	dir: string;
	/** Verdaccio's executable script (run it with a Node 22+). */
	verdaccio: string;
	/** Verdaccio's version, as installed. */
	verdaccioVersion: string;
	/** npm 10's CLI script (`node <npm10Cli> ci …`). */
	npm10Cli: string;
	/** npm 10's version, as installed. */
	npm10Version: string;
}

let tools: Promise<ReleaseTools> | undefined;

/**
 * Installs (once; then about 1 ms) test/release/tools/ with `npm ci` into the n8n cache folder
 * (GEN_GATEWAY_N8N_CACHE, default ~/.cache/gen-gateway-n8n/release-tools), keyed by a hash of its package.json and
 * lockfile. Concurrent installers (jest workers, two test files) each stage their own copy; the first rename wins.
 */
export function ensureReleaseTools(): Promise<ReleaseTools> {
	tools ??= installReleaseTools();
	tools.catch(() => (tools = undefined));
	return tools;
}

async function installReleaseTools(): Promise<ReleaseTools> {
	const cache = process.env.GEN_GATEWAY_N8N_CACHE ?? path.join(os.homedir(), '.cache', 'gen-gateway-n8n');
	const dir = path.join(cache, 'release-tools');
	const files = ['package.json', 'package-lock.json'];
	const stamp = createHash('sha256');
	for (const file of files) stamp.update(fs.readFileSync(path.join(RELEASE_TOOLS_HOST, file)));
	const wanted = stamp.digest('hex');
	const describe = (): ReleaseTools => {
		const modules = path.join(dir, 'node_modules');
		const version = (name: string) => JSON.parse(fs.readFileSync(path.join(modules, name, 'package.json'), 'utf8')).version;
		return {
			dir,
			verdaccio: path.join(modules, 'verdaccio', 'bin', 'verdaccio'),
			verdaccioVersion: version('verdaccio'),
			npm10Cli: path.join(modules, 'npm', 'bin', 'npm-cli.js'),
			npm10Version: version('npm'),
		};
	};
	const current = () => fs.existsSync(path.join(dir, '.installed')) && fs.readFileSync(path.join(dir, '.installed'), 'utf8') === wanted;
	if (current()) return describe();

	fs.mkdirSync(cache, { recursive: true });
	const staging = fs.mkdtempSync(path.join(cache, 'release-tools.staging-'));
	try {
		for (const file of files) fs.copyFileSync(path.join(RELEASE_TOOLS_HOST, file), path.join(staging, file));
		// ignore-scripts: none of these packages needs an install script.
		const result = await runProcess('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
			cwd: staging,
			env: cleanNpmEnv(),
			timeoutMs: 300_000,
		});
		if (result.exitCode !== 0) throw new Error(`npm ci in ${RELEASE_TOOLS_HOST} (copy) failed:\n${result.stderr}`);
		fs.writeFileSync(path.join(staging, '.installed'), wanted);
		if (!current()) {
			fs.rmSync(dir, { recursive: true, force: true });
			try {
				fs.renameSync(staging, dir);
			} catch (error) {
				if (!current()) throw error; // another process put a current copy there first: use it
			}
		}
	} finally {
		fs.rmSync(staging, { recursive: true, force: true });
	}
	return describe();
}

/** A Node 22+ executable: this process's, or the Node 24 n8n 2.x runs on (installed by scripts/install-n8n.sh). */
export async function node22Plus(): Promise<string> {
	if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
	const install = await ensureN8n(2);
	const node = path.join(install.dir, 'node-bin', 'node');
	if (!fs.existsSync(node)) throw new Error(`no Node 22+ for Verdaccio: ${node} does not exist`);
	return node;
}

export async function startLocalRegistry(options: LocalRegistryOptions = {}): Promise<LocalRegistry> {
	const host = options.host ?? '127.0.0.1';
	const port = options.port ?? (await freePort());
	const scheme = options.tls ? 'https' : 'http';
	const hostPart = host.includes(':') ? `[${host}]` : host;
	const directUrl = `${scheme}://${hostPart}:${port}/`;
	const url = withSlash(options.publicUrl ?? directUrl);
	const uplink = options.uplink;
	if (uplink && options.tls) throw new Error('startLocalRegistry: uplink works over HTTP only');
	// With an uplink, Verdaccio listens on a port of its own behind the redirecting front.
	const verdaccioPort = uplink ? await freePort() : port;
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-gateway-registry-'));
	const storage = options.storageDir ?? path.join(dir, 'storage');
	fs.mkdirSync(storage, { recursive: true });

	const tlsLines: string[] = [];
	if (options.tls) {
		fs.writeFileSync(path.join(dir, 'key.pem'), options.tls.key, { mode: 0o600 });
		fs.writeFileSync(path.join(dir, 'cert.pem'), options.tls.cert);
		tlsLines.push('https:', `  key: ${path.join(dir, 'key.pem')}`, `  cert: ${path.join(dir, 'cert.pem')}`);
		if (options.tls.ca) fs.writeFileSync(path.join(dir, 'ca.pem'), options.tls.ca);
	}
	// No uplinks unless asked for: a name the registry does not hold is a 404, never a request to another registry.
	const config = [
		`storage: ${storage}`,
		'auth:',
		'  htpasswd:',
		`    file: ${path.join(dir, 'htpasswd')}`,
		'    max_users: 1',
		'uplinks: {}',
		'packages:',
		"  '**':",
		'    access: $all',
		'    publish: $authenticated',
		'    unpublish: $authenticated',
		'web:',
		'  enable: false',
		'max_body_size: 200mb',
		'log: { type: stdout, format: pretty, level: warn }',
		...tlsLines,
		`listen: ${scheme}://${hostPart}:${verdaccioPort}`,
		'',
	].join('\n');
	const configFile = path.join(dir, 'config.yaml');
	fs.writeFileSync(configFile, config);

	const nodeBin = options.nodeBin ?? (await node22Plus());
	const { verdaccio } = await ensureReleaseTools();
	let output = '';
	// Its own process group, killed with this process at the latest (spawnGroup).
	const child: ChildProcess = spawnGroup(nodeBin, [verdaccio, '--config', configFile], {
		cwd: dir,
		env: cleanNpmEnv(options.publicUrl ? { VERDACCIO_PUBLIC_URL: url } : {}),
	});
	child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));

	const agent = options.tls
		? new https.Agent({ ca: options.tls.ca, rejectUnauthorized: Boolean(options.tls.ca), checkServerIdentity: () => undefined })
		: new http.Agent();
	const request = (method: string, urlPath: string, body?: unknown, token?: string) =>
		send(`${directUrl}${urlPath.replace(/^\//, '')}`, method, agent, body, token, url);

	const front = uplink ? await startFront(host, port, `http://${hostPart}:${verdaccioPort}`, uplink, dir) : undefined;

	const stop = async () => {
		await front?.close();
		if (child.exitCode === null && child.signalCode === null) {
			killGroup(child, 'SIGTERM');
			const killer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
			await exited;
			clearTimeout(killer);
		}
		agent.destroy();
		fs.rmSync(dir, { recursive: true, force: true });
	};

	try {
		const deadline = Date.now() + 60_000;
		for (;;) {
			if (child.exitCode !== null) throw new Error(`Verdaccio exited with ${child.exitCode}:\n${output}`);
			const ping = await request('GET', '-/ping').catch(() => undefined);
			if (ping?.status === 200) break;
			if (Date.now() > deadline) throw new Error(`Verdaccio did not answer on ${directUrl} within 60 s:\n${output}`);
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		const user = 'gen-gateway-release';
		const added = await request('PUT', `-/user/org.couchdb.user:${user}`, {
			_id: `org.couchdb.user:${user}`,
			name: user,
			password: `pw-${process.pid}-${Date.now()}`,
			type: 'user',
			roles: [],
		});
		const token = (added.json as { token?: string } | undefined)?.token;
		if (added.status !== 201 || !token) throw new Error(`Verdaccio refused the user: ${added.status} ${added.text}`);

		// npm keys a token by the registry's URL as WHATWG URL writes it: without a default port (https :443, http :80).
		const parsed = new URL(url);
		const authKey = `//${parsed.host}${parsed.pathname}`;
		const npmrcLines = [`registry=${url}`, `${authKey}:_authToken=${token}`];
		if (options.tls?.ca) npmrcLines.push(`cafile=${path.join(dir, 'ca.pem')}`);
		const userconfig = path.join(dir, 'npmrc');
		fs.writeFileSync(userconfig, `${npmrcLines.join('\n')}\n`, { mode: 0o600 });

		return {
			url,
			directUrl,
			token,
			npmrcLines,
			userconfig,
			dir,
			logs: () => output,
			stop,
			publish: async (tarball, publishOptions = {}) => {
				const args = ['publish', tarball, '--userconfig', userconfig, '--registry', url, '--access', 'public'];
				// The tarball's publishConfig asks for provenance, which npm can only make in a CI provider.
				args.push('--provenance=false', '--ignore-scripts', '--tag', publishOptions.tag ?? 'latest');
				const result = await runProcess('npm', args, {
					env: cleanNpmEnv(publishOptions.env),
					timeoutMs: 120_000,
				});
				if (result.exitCode !== 0) {
					throw new Error(`npm publish ${path.basename(tarball)} to ${url} exited with ${result.exitCode}:\n${result.stderr}`);
				}
				return result;
			},
			packument: async (name) => {
				const answer = await request('GET', encodeURIComponent(name).replace(/^%40/, '@'));
				if (answer.status === 404) return undefined;
				if (answer.status !== 200) throw new Error(`GET ${name}: ${answer.status} ${answer.text}`);
				return answer.json;
			},
			versions: async (name) => {
				const answer = await request('GET', encodeURIComponent(name).replace(/^%40/, '@'));
				if (answer.status === 404) return [];
				return Object.keys((answer.json as { versions?: object }).versions ?? {});
			},
		};
	} catch (error) {
		await stop();
		throw error;
	}
}

function withSlash(url: string): string {
	return url.endsWith('/') ? url : `${url}/`;
}

interface Answer {
	status: number;
	text: string;
	json: unknown;
}

/** One request to the registry; `publicUrl` gives the Host header clients would send. */
function send(
	target: string,
	method: string,
	agent: http.Agent,
	body: unknown,
	token: string | undefined,
	publicUrl: string,
): Promise<Answer> {
	const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
	const headers: http.OutgoingHttpHeaders = { accept: 'application/json', host: new URL(publicUrl).host };
	if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
	if (token) headers.authorization = `Bearer ${token}`;
	const lib = target.startsWith('https:') ? https : http;
	return new Promise((resolve, reject) => {
		const req = lib.request(target, { method, agent, headers, timeout: 10_000 }, (res) => {
			const chunks: Buffer[] = [];
			res.on('data', (chunk: Buffer) => chunks.push(chunk));
			res.on('end', () => {
				const text = Buffer.concat(chunks).toString('utf8');
				let json: unknown;
				try {
					json = JSON.parse(text);
				} catch {
					json = undefined;
				}
				resolve({ status: res.statusCode ?? 0, text, json });
			});
			res.on('error', reject);
		});
		req.on('timeout', () => req.destroy(new Error(`${method} ${target}: no answer within 10 s`)));
		req.on('error', reject);
		req.end(payload);
	});
}

/**
 * The uplink front, run as a child process (a server in the test's own process would stop answering while the test
 * waits in a spawnSync): a redirect to the upstream for every GET/HEAD of a package outside localOnly; everything else
 * piped to Verdaccio unchanged (Host header included, so Verdaccio writes tarball addresses under the front's name).
 * argv: host port verdaccioUrl upstreamUrl localOnlyJson. Prints "ready" once listening.
 */
const FRONT_SCRIPT = `
const http = require('http');
const [host, port, verdaccio, upstream, localJson] = process.argv.slice(2);
const local = new Set(JSON.parse(localJson));
const agent = new http.Agent({ keepAlive: true });
function packageOf(url) {
	const pathname = decodeURIComponent(url.split('?')[0]);
	if (pathname.startsWith('/-/')) return undefined;
	const parts = pathname.split('/').filter(Boolean);
	if (parts.length === 0) return undefined;
	return parts[0].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
const server = http.createServer((req, res) => {
	const url = req.url || '/';
	const name = packageOf(url);
	if (name !== undefined && !local.has(name) && (req.method === 'GET' || req.method === 'HEAD')) {
		res.writeHead(302, { location: upstream + url.replace(/^\\//, '') });
		res.end();
		return;
	}
	const forward = http.request(verdaccio + url, { method: req.method, headers: req.headers, agent }, (answer) => {
		res.writeHead(answer.statusCode || 502, answer.headers);
		answer.pipe(res);
	});
	forward.on('error', (error) => {
		if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
		res.end('front: ' + error.message);
	});
	req.pipe(forward);
});
server.listen(Number(port), host, () => console.log('ready'));
process.on('SIGTERM', () => process.exit(0));
`;

async function startFront(
	host: string,
	port: number,
	verdaccio: string,
	uplink: { url: string; localOnly: string[] },
	dir: string,
): Promise<{ close(): Promise<void> }> {
	const script = path.join(dir, 'front.js');
	fs.writeFileSync(script, FRONT_SCRIPT);
	const child = spawnGroup(process.execPath, [script, host, String(port), verdaccio, withSlash(uplink.url), JSON.stringify(uplink.localOnly)], {
		env: cleanNpmEnv(),
	});
	let output = '';
	const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
	await new Promise<void>((resolve, reject) => {
		child.stdout!.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			if (output.includes('ready')) resolve();
		});
		child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.on('exit', (code) => reject(new Error(`the registry front exited with ${code}: ${output}`)));
	});
	return {
		close: async () => {
			if (child.exitCode === null && child.signalCode === null) {
				killGroup(child, 'SIGTERM');
				await exited;
			}
		},
	};
}
