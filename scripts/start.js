#!/usr/bin/env node
// `npm start`: a real n8n with this package loaded, wired to the mock service, ready to click through.
//   1. installs the pinned n8n once (scripts/install-n8n.sh; minutes the first time, then instant)
//   2. starts the mock service (test/mock) on a random loopback port (MOCK_PORT to pin it); MOCK_PERSONALITY=new-api
//      makes it answer as the real gateway new-api does (test/mock/README.md)
//   3. keeps n8n's data in .n8n-dev/ (gitignored; delete it to start over)
//   4. imports the credential "Gen Gateway (mock)", the OpenAI credential "Gen Gateway as OpenAI (mock)" (Base URL
//      <mock>/v1, for the documented alternative route: n8n's OpenAI Chat Model as an agent's model, the route on
//      n8n 1.x; the AI Agent example itself uses Gen Gateway Chat Model on "Gen Gateway (mock)") and every workflow in
//      examples/ (re-imported on each start, so examples/ stays the source of truth: save your own variants under
//      another name)
//   5. runs `n8n start` on 127.0.0.1:5678 (PORT to change), with an owner account, and prints how to log in
// It prints its steps with their times; n8n's own output (migrations, log lines) goes to .n8n-dev/n8n.log.
// Ctrl-C stops n8n and the mock. Plain JS that loads the TypeScript toolkit through ts-node (transpile only).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
require('ts-node').register({ transpileOnly: true, project: path.join(root, 'tsconfig.json') });
const { createN8nHome, ensureN8n, DEFAULT_OWNER } = require('../test/e2e/n8n');
const { spawnMockProcess } = require('../test/mock/process');
const { keepOutOfLint } = require('./dev-home-lint');

const DEV_HOME = path.join(root, '.n8n-dev');
const MOCK_CREDENTIAL = { id: 'GenGatewayMock01', name: 'Gen Gateway (mock)', type: 'genGatewayApi' };
// n8n's own OpenAI credential, for an OpenAI Chat Model node (the alternative route of docs/ai-agent.md; no example
// uses it): Base URL = the mock's /v1.
const MOCK_OPENAI_CREDENTIAL = { id: 'GenGatewayOpenAI', name: 'Gen Gateway as OpenAI (mock)', type: 'openAiApi' };

const say = (message) => process.stdout.write(`[start] ${message}\n`);
// n8n's own output (its migrations on every CLI import, its log) goes here, not to the screen.
const N8N_LOG = path.join(DEV_HOME, 'n8n.log');

/** Runs one step and says how long it took. */
async function step(what, work) {
	const started = Date.now();
	const result = await work();
	say(`${what}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	return result;
}

/** The end of n8n's log, for when it stopped or failed. */
function logTail(lines = 40) {
	if (!fs.existsSync(N8N_LOG)) return '';
	return fs.readFileSync(N8N_LOG, 'utf8').split('\n').slice(-lines).join('\n');
}

/** The owner's password lives in .n8n-dev/owner.json, made once per dev home. */
function ownerOf(home) {
	const file = path.join(home, 'owner.json');
	if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
	const owner = { ...DEFAULT_OWNER, password: `Dev-${crypto.randomBytes(6).toString('hex')}-7` };
	fs.writeFileSync(file, JSON.stringify(owner, null, 2), { mode: 0o600 });
	return owner;
}

/** A stable 16-character workflow id from an example's file name, for examples that carry none. */
function idFor(fileName) {
	return crypto.createHash('sha256').update(fileName).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 16);
}

/** The examples, each pointed at the mock credential (whatever credential id the file names). */
function examples() {
	const dir = path.join(root, 'examples');
	if (!fs.existsSync(dir)) return [];
	return fs
		.readdirSync(dir)
		.filter((name) => name.endsWith('.json'))
		.sort()
		.map((name) => {
			const workflow = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
			for (const node of workflow.nodes ?? []) {
				if (node.credentials?.genGatewayApi) {
					node.credentials.genGatewayApi = { id: MOCK_CREDENTIAL.id, name: MOCK_CREDENTIAL.name };
				}
				if (node.credentials?.openAiApi) {
					node.credentials.openAiApi = { id: MOCK_OPENAI_CREDENTIAL.id, name: MOCK_OPENAI_CREDENTIAL.name };
				}
			}
			return { name, workflow: { ...workflow, id: workflow.id ?? idFor(name) } };
		});
}

/** MOCK_PERSONALITY=new-api: the mock answers as new-api does; unset or anything else: the default mock. */
function mockPersonality() {
	const wanted = (process.env.MOCK_PERSONALITY || '').trim().toLowerCase();
	if (wanted === 'new-api' || wanted === 'newapi') return 'new-api';
	if (wanted && wanted !== 'default') say(`MOCK_PERSONALITY=${wanted} is unknown (new-api or default); using default`);
	return 'default';
}

async function main() {
	say('making sure the pinned n8n is installed (the first time takes about 6-10 minutes)...');
	const install = await step('n8n installed', () => ensureN8n());
	say(`n8n ${install.version} from ${install.dir}`);

	const personality = mockPersonality();
	const mock = await spawnMockProcess({
		...(process.env.MOCK_PORT ? { port: Number(process.env.MOCK_PORT) } : {}),
		personality,
	});
	say(`mock service on ${mock.url}${personality === 'new-api' ? ', speaking as new-api' : ''}`);

	const stopAll = [];
	let stopping = false;
	const shutdown = async (code) => {
		if (stopping) return;
		stopping = true;
		say('stopping n8n and the mock...');
		for (const stop of stopAll.reverse()) await stop().catch(() => undefined);
		process.exit(code);
	};
	stopAll.push(() => mock.stop());
	process.on('SIGINT', () => shutdown(0));
	process.on('SIGTERM', () => shutdown(0));

	try {
		fs.mkdirSync(DEV_HOME, { recursive: true });
		keepOutOfLint(DEV_HOME);
		fs.writeFileSync(N8N_LOG, '');
		say(`n8n's own output goes to ${path.relative(process.cwd(), N8N_LOG) || N8N_LOG}`);
		const home = await step('package built and installed into n8n', () =>
			createN8nHome({ dir: DEV_HOME, logLevel: 'info', logFile: N8N_LOG, build: true }),
		);
		await step('credentials imported', async () => {
			await home.importCredential({ ...MOCK_CREDENTIAL, data: { baseUrl: mock.url, apiKey: mock.apiKey } });
			say(`credential "${MOCK_CREDENTIAL.name}" → ${mock.url}`);
			await home.importCredential({ ...MOCK_OPENAI_CREDENTIAL, data: { apiKey: mock.apiKey, url: `${mock.url}/v1` } });
			say(`credential "${MOCK_OPENAI_CREDENTIAL.name}" → ${mock.url}/v1`);
		});
		const found = examples();
		await step(`${found.length} examples imported`, () => home.importWorkflows(found.map(({ workflow }) => workflow)));
		for (const { name, workflow } of found) say(`workflow "${workflow.name}" from examples/${name}`);

		const port = Number(process.env.PORT ?? 5678);
		say(`starting n8n on http://127.0.0.1:${port} ...`);
		const server = await home.startServer({ port });
		stopAll.push(() => server.stop());
		server.process.on('close', (code) => {
			if (!stopping) {
				say(`n8n exited (${code}); the end of its log:\n${logTail()}`);
				shutdown(1);
			}
		});

		const owner = ownerOf(DEV_HOME);
		try {
			await server.ownerSession(owner);
		} catch (error) {
			say(`could not log in as ${owner.email} (${error.message}); delete .n8n-dev/ to start over`);
		}
		say('');
		say(`n8n is ready: ${server.url}  (started in ${(server.readyAfterMs / 1000).toFixed(1)} s)`);
		say(`log in as ${owner.email} / ${owner.password}`);
		say(`the credential "${MOCK_CREDENTIAL.name}" points at the mock service ${mock.url}`);
		say('Ctrl-C stops everything');
	} catch (error) {
		say(`failed: ${error.stack ?? error}`);
		const tail = logTail();
		if (tail) say(`the end of n8n's log (${N8N_LOG}):\n${tail}`);
		await shutdown(1);
	}
}

main();
