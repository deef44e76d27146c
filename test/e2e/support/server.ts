import type { ChildProcess } from 'child_process';

import { timed } from '../../timing/phases';
import type { CredentialImport, N8nHome } from './home';
import { freePort, killGroup, spawnGroup, tail } from './process';

/**
 * Headers for every request a test sends to n8n: a connection of its own each time. fetch keeps idle connections for
 * reuse, n8n closes an idle one when its keep-alive timeout runs out, and a request sent on it just then fails with
 * "SocketError: other side closed" (nodejs/undici#3492): savedWorkflows.e2e's first REST call after a test spent its
 * time in the editor, CI 2026-11-29, five jest workers on two cores. A new loopback connection costs nothing here.
 */
export const FRESH_CONNECTION = { connection: 'close' } as const;

export interface ServerOptions {
	/** Port on 127.0.0.1; default a free one. */
	port?: number;
	/** How long to wait for the server to answer; default 180 s. */
	readyTimeoutMs?: number;
	/**
	 * Runs `n8n start` through another command and environment (e.g. inside a mount namespace of the test's own,
	 * support/registryNamespace.ts); default: as is.
	 */
	wrap?: (command: string, args: string[], env: NodeJS.ProcessEnv) => { command: string; args: string[]; env: NodeJS.ProcessEnv };
}

export interface Owner {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

/** The owner the tests and `npm start` create unless told otherwise (n8n wants 8+ chars, a digit, an uppercase). */
export const DEFAULT_OWNER: Owner = {
	email: 'owner@example.com',
	password: 'GenGateway-e2e-1',
	firstName: 'Owner',
	lastName: 'Example',
};

export interface RestResponse {
	status: number;
	/** Parsed JSON body (n8n wraps most answers in `{ data }`), or the text when it is not JSON. */
	body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
	headers: Headers;
}

export interface N8nServer {
	url: string;
	port: number;
	process: ChildProcess;
	/** Milliseconds from spawn until /healthz answered, and until the REST API answered. */
	healthyAfterMs: number;
	readyAfterMs: number;
	/** Creates the instance owner (only possible once per home) and returns the session cookie. */
	setupOwner(owner?: Owner): Promise<string>;
	/** Logs in and returns the session cookie (`n8n-auth=...`). */
	login(email?: string, password?: string): Promise<string>;
	/** The owner's session: sets the owner up when the instance has none yet, logs in otherwise. */
	ownerSession(owner?: Owner): Promise<string>;
	/** A REST call (`/rest/...`, `/api/v1/...`, `/types/...`), JSON in and out. */
	rest(method: string, path: string, options?: { body?: unknown; cookie?: string; headers?: Record<string, string> }): Promise<RestResponse>;
	/**
	 * Creates credentials as the editor does (`POST /rest/credentials`, the owner's session; n8n encrypts the data) and
	 * returns their ids, in order. n8n assigns the ids (both lines ignore the requested `id`); a workflow imported
	 * afterwards through this server that names a credential by its requested id is pointed at the created one.
	 */
	importCredentials(credentials: CredentialImport[]): Promise<string[]>;
	importCredential(credential: CredentialImport): Promise<string>;
	/** The id n8n gave the credential imported with `requestedId` (the id itself when none was). */
	credentialId(requestedId: string): string;
	/**
	 * Creates workflows as the editor does (`POST /rest/workflows`) and returns their ids, in order: n8n 2.x keeps a
	 * given `id`, 1.x always assigns one, so use the returned ids. Defaults as the CLI import: inactive, execution order
	 * v1, no connections. Credential references are mapped as importCredentials says.
	 */
	importWorkflows(workflows: Array<Record<string, unknown>>): Promise<string[]>;
	importWorkflow(workflow: Record<string, unknown>): Promise<string>;
	/**
	 * Activates (2.x: publishes) the workflows as the editor's toggle does (`POST /rest/workflows/<id>/activate` with
	 * the current version): their production webhooks, forms and chat triggers register at once, no restart needed.
	 */
	activateWorkflows(ids: string[]): Promise<void>;
	/** SIGTERM to n8n and its task runner, SIGKILL after 15 s. */
	stop(): Promise<void>;
}

/** Free ports are only free until someone takes them: a start that lost its port is retried on new ones. */
export async function startServer(home: N8nHome, options: ServerOptions = {}): Promise<N8nServer> {
	return await timed('start', 'n8n start', () => startWithRetries(home, options));
}

async function startWithRetries(home: N8nHome, options: ServerOptions): Promise<N8nServer> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await startOnce(home, options);
		} catch (error) {
			const lostPort = /EADDRINUSE|address already in use|port \d+ is already in use/i.test(String(error));
			if (!lostPort || options.port !== undefined || attempt >= 3) throw error;
			home.record(`\n(port taken, starting n8n again: attempt ${attempt + 1})\n`);
		}
	}
}

async function startOnce(home: N8nHome, options: ServerOptions): Promise<N8nServer> {
	const port = options.port ?? (await freePort());
	const url = `http://127.0.0.1:${port}`;
	const env = home.env({
		N8N_PORT: String(port),
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
		N8N_EDITOR_BASE_URL: `${url}/`,
		[home.webhookUrlVariable]: `${url}/`,
		...(home.explicitExpressionEngine ? { N8N_EXPRESSION_ENGINE: home.explicitExpressionEngine } : {}),
	});
	home.record(`\n$ n8n start (port ${port})\n`);
	const started = Date.now();
	const launch = options.wrap?.(home.install.n8nBin, ['start'], env) ?? { command: home.install.n8nBin, args: ['start'], env };
	const child = spawnGroup(launch.command, launch.args, { cwd: home.dir, env: launch.env });
	let output = '';
	const onChunk = (chunk: Buffer) => {
		output += chunk.toString();
		home.record(chunk.toString());
	};
	child.stdout!.on('data', onChunk);
	child.stderr!.on('data', onChunk);
	const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
	let exitCode: number | null | undefined;
	child.on('close', (code) => (exitCode = code));

	const rest: N8nServer['rest'] = async (method, path, { body, cookie, headers = {} } = {}) => {
		const response = await fetch(`${url}${path}`, {
			method,
			headers: {
				...FRESH_CONNECTION,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
				...(cookie ? { cookie } : {}),
				...headers,
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		let parsed: unknown = text;
		try {
			parsed = JSON.parse(text);
		} catch {
			// not JSON: keep the text
		}
		return { status: response.status, body: parsed, headers: response.headers };
	};

	const waitFor = async (path: string): Promise<number> => {
		const deadline = started + (options.readyTimeoutMs ?? 180_000);
		while (Date.now() < deadline) {
			if (exitCode !== undefined) throw new Error(`n8n start exited with ${exitCode} before answering ${path}:\n${tail(output)}`);
			try {
				// n8n 2.x answers every route with 200 "n8n is starting up. Please wait" (text) until it is ready.
				const answer = await rest('GET', path);
				if (answer.status === 200 && typeof answer.body === 'object' && answer.body !== null) return Date.now() - started;
			} catch {
				// not listening yet
			}
			await new Promise((resolve) => setTimeout(resolve, 200));
		}
		throw new Error(`n8n start did not answer ${path} in time:\n${tail(output)}`);
	};

	const stop = async () => {
		if (exitCode !== undefined) return;
		killGroup(child, 'SIGTERM');
		const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 15_000);
		await exited;
		clearTimeout(timer);
	};

	let healthyAfterMs: number;
	let readyAfterMs: number;
	try {
		healthyAfterMs = await waitFor('/healthz');
		readyAfterMs = await waitFor('/rest/settings');
	} catch (error) {
		await stop();
		throw error;
	}

	const sessionCookie = (response: RestResponse, what: string): string => {
		const cookie = response.headers.getSetCookie().find((c) => c.startsWith('n8n-auth='));
		if (response.status !== 200 || !cookie) {
			throw new Error(`${what} failed with ${response.status}: ${JSON.stringify(response.body)}`);
		}
		return cookie.split(';')[0];
	};

	const setupOwner = async (owner: Owner = DEFAULT_OWNER) =>
		await timed('signin', 'owner setup (REST)', async () =>
			sessionCookie(await rest('POST', '/rest/owner/setup', { body: owner }), 'owner setup'),
		);

	const login = async (email = DEFAULT_OWNER.email, password = DEFAULT_OWNER.password) =>
		await timed('signin', 'login (REST)', async () =>
			sessionCookie(await rest('POST', '/rest/login', { body: { emailOrLdapLoginId: email, password } }), 'login'),
		);

	const ownerSession = async (owner: Owner = DEFAULT_OWNER) => {
		const settings = await rest('GET', '/rest/settings');
		const needsSetup = settings.body?.data?.userManagement?.showSetupOnFirstLoad === true;
		return needsSetup ? await setupOwner(owner) : await login(owner.email, owner.password);
	};

	// Set-up over REST runs in the owner's session, made once per server on first use.
	let setupCookie: Promise<string> | undefined;
	const setupRest = async (method: string, path: string, body?: unknown): Promise<any> => { // eslint-disable-line @typescript-eslint/no-explicit-any
		setupCookie ??= ownerSession();
		const response = await rest(method, path, { cookie: await setupCookie, body });
		if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body).slice(0, 1000)}`);
		return response.body.data;
	};
	const credentialIds = new Map<string, string>();
	const versionIds = new Map<string, string>();

	const importCredentials = async (credentials: CredentialImport[]) =>
		await timed('rest', `import ${credentials.length} credential(s) (REST)`, async () => {
			const ids: string[] = [];
			for (const { id, name, type, data } of credentials) {
				const created = (await setupRest('POST', '/rest/credentials', { name, type, data })) as { id: string };
				credentialIds.set(id, created.id);
				home.record(`\n(REST) credential "${name}" (${type}) created as ${created.id}\n`);
				ids.push(created.id);
			}
			return ids;
		});

	const withCredentialIds = (nodes: unknown): unknown =>
		Array.isArray(nodes)
			? nodes.map((node: { credentials?: Record<string, { id?: string | null; name?: string }> }) =>
					node.credentials
						? {
								...node,
								credentials: Object.fromEntries(
									Object.entries(node.credentials).map(([type, ref]) => [
										type,
										ref?.id && credentialIds.has(ref.id) ? { ...ref, id: credentialIds.get(ref.id) } : ref,
									]),
								),
							}
						: node,
				)
			: nodes;

	const importWorkflows = async (workflows: Array<Record<string, unknown>>) =>
		await timed('rest', `import ${workflows.length} workflow(s) (REST)`, async () => {
			const ids: string[] = [];
			for (const workflow of workflows) {
				// n8n sets `active` (false) and `versionId` itself; activateWorkflows publishes.
				const body = { settings: { executionOrder: 'v1' }, connections: {}, ...workflow, nodes: withCredentialIds(workflow.nodes) };
				const created = (await setupRest('POST', '/rest/workflows', body)) as { id: string; versionId: string };
				versionIds.set(created.id, created.versionId);
				home.record(`\n(REST) workflow "${String(workflow.name)}" created as ${created.id}\n`);
				ids.push(created.id);
			}
			return ids;
		});

	const activateWorkflows = async (ids: string[]) =>
		await timed('rest', `activate ${ids.length} workflow(s) (REST)`, async () => {
			for (const id of ids) {
				const versionId = versionIds.get(id) ?? ((await setupRest('GET', `/rest/workflows/${id}`)) as { versionId: string }).versionId;
				await setupRest('POST', `/rest/workflows/${id}/activate`, { versionId });
				home.record(`\n(REST) workflow ${id} activated\n`);
			}
		});

	return {
		url,
		port,
		process: child,
		healthyAfterMs,
		readyAfterMs,
		setupOwner,
		login,
		ownerSession,
		rest,
		importCredentials,
		importCredential: async (credential) => (await importCredentials([credential]))[0],
		credentialId: (requestedId) => credentialIds.get(requestedId) ?? requestedId,
		importWorkflows,
		importWorkflow: async (workflow) => (await importWorkflows([workflow]))[0],
		activateWorkflows,
		stop,
	};
}
