import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

import { ensureBuilt } from './build';
import { ensureN8n, type N8nInstall } from './install';
import { installPackage, type InstallRoute } from './packageInstall';
import { TEMP_ROOT } from './paths';
import { freePort, runProcess, type ProcessResult } from './process';
import { recordPhase, timed, timedSync } from '../../timing/phases';
import { findSecret, type SecretHit } from './secrets';
import { databaseFiles, seedDatabase } from './templateDb';
import { startServer, type N8nServer, type ServerOptions } from './server';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface N8nHomeOptions {
	/** A persistent folder to use (created if missing); default: a fresh temporary folder, removed by dispose(). */
	dir?: string;
	/** n8n's log level; `debug` makes the secret scans see the most. Default `debug`. */
	logLevel?: LogLevel;
	/** Extra environment for every n8n process of this home. */
	env?: Record<string, string>;
	/** Run `npm run build` when dist/ is missing or stale instead of failing. Default false. */
	build?: boolean;
	/** Also print every n8n output chunk to this process's stderr. */
	echo?: boolean;
	/** Also append every n8n output chunk to this file (`npm start`: .n8n-dev/n8n.log, n8n's chatter off the screen). */
	logFile?: string;
	/** Install our package (default true); false gives a plain n8n, for checking the toolkit itself. */
	withPackage?: boolean;
	/**
	 * How the package is installed (default 'n8n': as n8n's own community-package installer does; see
	 * packageInstall.ts). Never a link to the checkout, except as a test's negative control.
	 */
	installRoute?: InstallRoute;
	/**
	 * Expression engine of the short-lived CLI processes (import, execute). Default `legacy`, or
	 * GEN_GATEWAY_E2E_EXPRESSION_ENGINE: with n8n's default `vm` engine, `n8n execute` sometimes dies with SIGSEGV at
	 * exit after printing its run (a V8 scavenge on the isolate's thread while Node tears down): 7 of 57 runs here,
	 * on 1.123.81 (isolated-vm 5, Node 20) and 2.41.1 (isolated-vm 7, Node 24) alike; 0 of 45 with `legacy`.
	 * The server keeps n8n's default unless this is set.
	 */
	expressionEngine?: 'legacy' | 'vm';
	/**
	 * Let this home's first n8n process migrate an empty database itself. Default false: a new SQLite home starts with a
	 * copy of a database n8n migrated once per install (templateDb.ts), 2 s of CPU less per home.
	 */
	emptyDatabase?: boolean;
}

export interface CredentialImport {
	/** 16 characters, letters and digits (use randomId()). */
	id: string;
	name: string;
	/** The credential type, e.g. `genGatewayApi`. */
	type: string;
	/** The plain fields; n8n encrypts them on import. */
	data: Record<string, unknown>;
}

/** What `n8n execute-batch --output` writes: one entry per workflow run. */
interface BatchSummary {
	executions: Array<{ workflowId: string; executionStatus: string; error?: string }>;
}

export interface ExecuteResult extends ProcessResult {
	/** The run n8n printed (IRun: data.resultData.runData, status, ...), or undefined if it printed none. */
	json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Letters and digits, the shape n8n uses for workflow and credential ids. */
export function randomId(length = 16): string {
	const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
	return Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('');
}

/** Settings a home keeps across runs, so a persistent home can decrypt what it stored before. */
interface HomeSettings {
	encryptionKey: string;
}

/**
 * One N8N_USER_FOLDER with our built package installed as n8n installs a community package
 * (`.n8n/nodes/node_modules/n8n-nodes-gen-gateway`, from the packed tarball), sqlite, and binary data on disk.
 * Every n8n process it runs appends its output to logs().
 */
export class N8nHome {
	private output: string[] = [];

	private constructor(
		readonly dir: string,
		readonly install: N8nInstall,
		private readonly settings: HomeSettings,
		private readonly options: N8nHomeOptions,
	) {}

	static async create(options: N8nHomeOptions = {}): Promise<N8nHome> {
		const withPackage = options.withPackage ?? true;
		if (withPackage) timedSync('install', 'build check', () => ensureBuilt({ build: options.build }));
		const install = await timed('install', `n8n ${process.env.GEN_GATEWAY_E2E_N8N === '1' ? '1.x' : '2.x'} install check`, () => ensureN8n());
		const dir = options.dir ?? fs.mkdtempSync(path.join(TEMP_ROOT, 'gen-gateway-n8n-'));
		fs.mkdirSync(dir, { recursive: true });
		const settings = loadSettings(dir);
		const startedAt = Date.now();
		if (withPackage) installPackage(dir, options.installRoute ?? 'n8n', install.path);
		const home = new N8nHome(path.resolve(dir), install, settings, options);
		const sqlite = (options.env?.DB_TYPE ?? 'sqlite') === 'sqlite';
		if (sqlite && !options.emptyDatabase) await seedDatabase(home.n8nFolder, install, migratedDatabase);
		recordPhase('home', `home (${withPackage ? (options.installRoute ?? 'n8n') : 'no package'})`, startedAt);
		return home;
	}

	/** See N8nHomeOptions.expressionEngine. */
	get cliExpressionEngine(): 'legacy' | 'vm' {
		const fromEnv = process.env.GEN_GATEWAY_E2E_EXPRESSION_ENGINE;
		return this.options.expressionEngine ?? (fromEnv === 'vm' ? 'vm' : 'legacy');
	}

	/** The engine asked for explicitly (option or environment), for the server; undefined keeps n8n's default. */
	get explicitExpressionEngine(): 'legacy' | 'vm' | undefined {
		const fromEnv = process.env.GEN_GATEWAY_E2E_EXPRESSION_ENGINE;
		return this.options.expressionEngine ?? (fromEnv === 'vm' || fromEnv === 'legacy' ? fromEnv : undefined);
	}

	/** The `.n8n` folder n8n keeps its database, config and binary data in. */
	get n8nFolder(): string {
		return path.join(this.dir, '.n8n');
	}

	/** The environment every n8n process of this home gets (a quiet, offline, loopback-only n8n, plus per-process ports). */
	env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
		// Nothing of n8n's configuration leaks in from outside; NODE_ENV=test (set by jest) would make n8n refuse to
		// load nodes ("Not available in tests") and silence its logger.
		const inherited = Object.fromEntries(
			Object.entries(process.env).filter(
				([key]) => !/^(N8N_|DB_|EXECUTIONS_|QUEUE_|GENERIC_|JEST_|NODE_ENV$|NODE_OPTIONS$)/.test(key),
			),
		);
		return {
			...inherited,
			PATH: this.install.path,
			N8N_USER_FOLDER: this.dir,
			N8N_ENCRYPTION_KEY: this.settings.encryptionKey,
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			...this.lineSettings(),
			N8N_HOST: '127.0.0.1',
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_SECURE_COOKIE: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
			DB_TYPE: 'sqlite',
			N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem',
			// n8n 2.41 warns that this default turns to false (n8n 3.0): unverified packages then stop loading.
			N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
			N8N_LOG_LEVEL: this.options.logLevel ?? 'debug',
			N8N_LOG_OUTPUT: 'console',
			...this.options.env,
			...extra,
		};
	}

	/**
	 * What differs between the lines. 1.x runs Code in task runners only when asked; 2.x always does and logs
	 * N8N_RUNNERS_ENABLED as deprecated, and sets explicitly the three limits whose defaults it announces will shrink
	 * (the values of today, so nothing changes under a test). Its internal runner mode stays (the one warning left):
	 * external mode needs n8n's runner launcher, a separate program a single self-hosted n8n does not run.
	 */
	private lineSettings(): Record<string, string> {
		if (this.install.major === 1) return { N8N_RUNNERS_ENABLED: 'true' };
		return {
			N8N_RUNNERS_TASK_TIMEOUT: '300',
			N8N_COMPRESSION_NODE_MAX_DECOMPRESSED_SIZE_BYTES: String(2 * 1024 ** 3),
			N8N_COMPRESSION_NODE_MAX_ZIP_ENTRIES: '5000',
		};
	}

	/** The variable n8n reads its public webhook URL from: N8N_WEBHOOK_URL on 2.x (WEBHOOK_URL is deprecated there). */
	get webhookUrlVariable(): 'N8N_WEBHOOK_URL' | 'WEBHOOK_URL' {
		return this.install.major === 1 ? 'WEBHOOK_URL' : 'N8N_WEBHOOK_URL';
	}

	/** Runs `n8n <args>` in this home and records its output. Resolves with the exit code; never throws on it. */
	async cli(args: string[], timeoutMs = 120_000, extraEnv: Record<string, string> = {}): Promise<ProcessResult> {
		// Every process gets its own task-broker port, so runs never collide with another n8n on this machine.
		const env = this.env({
			N8N_RUNNERS_BROKER_PORT: String(await freePort()),
			N8N_EXPRESSION_ENGINE: this.cliExpressionEngine,
			...extraEnv,
		});
		this.record(`\n$ n8n ${args.join(' ')}\n`);
		// `n8n execute` and `execute-batch` are workflow runs (plus a cold n8n start); imports and updates are set-up.
		return await timed(args[0].startsWith('execute') ? 'run' : 'cli', `n8n ${args[0]}`, () =>
			runProcess(this.install.n8nBin, args, {
				cwd: this.dir,
				env,
				timeoutMs,
				onOutput: (chunk) => this.record(chunk),
			}),
		);
	}

	/** Imports one credential (n8n encrypts its data); the plain file exists only during the import. */
	async importCredential(credential: CredentialImport): Promise<string> {
		return (await this.importCredentials([credential]))[0];
	}

	/** Imports several credentials with one n8n process (each CLI call costs 3-4 s) and returns their ids. */
	async importCredentials(credentials: CredentialImport[]): Promise<string[]> {
		if (credentials.length > 0) await this.importFile('credentials', credentials);
		return credentials.map((credential) => credential.id);
	}

	/** Imports one workflow (keeps its id, or gives it a random one) and returns the id. */
	async importWorkflow(workflow: Record<string, unknown>): Promise<string> {
		return (await this.importWorkflows([workflow]))[0];
	}

	/** Imports several workflows with one n8n process (each CLI call costs 3-4 s) and returns their ids. */
	async importWorkflows(workflows: Array<Record<string, unknown>>): Promise<string[]> {
		const complete = workflows.map((workflow) => ({
			active: false,
			settings: { executionOrder: 'v1' },
			connections: {},
			...workflow,
			id: typeof workflow.id === 'string' ? workflow.id : randomId(),
		}));
		if (complete.length > 0) await this.importFile('workflow', complete);
		return complete.map((workflow) => workflow.id);
	}

	/** `n8n execute --id <id> --rawOutput`; the run is parsed from the first output line that starts with `{`. */
	async execute(workflowId: string, timeoutMs = 180_000): Promise<ExecuteResult> {
		const result = await this.cli(['execute', `--id=${workflowId}`, '--rawOutput'], timeoutMs);
		return { ...result, json: parseRun(result.stdout) };
	}

	/**
	 * Several workflows run one after another by one n8n process (`n8n execute-batch`): one cold start instead of one
	 * per `n8n execute`. Each workflow's result is shaped as `execute` gives it: `json` is its run (n8n's snapshot of
	 * it, written only for a run that succeeded), else undefined with exit code 1 and n8n's error for it in `stdout`.
	 * Nothing is run again (`--retries=0`: a paid request must not be resent by the test's own tool). n8n takes only
	 * ids with a digit in them (`/\d+/`): any other id is refused here instead of being skipped in silence.
	 */
	async executeBatch(workflowIds: string[], timeoutMs = 600_000): Promise<Map<string, ExecuteResult>> {
		const odd = workflowIds.filter((id) => !/\d/.test(id));
		if (odd.length > 0) throw new Error(`n8n execute-batch skips ids without a digit: ${odd.join(', ')}`);
		const dir = fs.mkdtempSync(path.join(this.dir, 'batch-'));
		const summaryFile = path.join(dir, 'summary.json');
		try {
			const args = ['execute-batch', `--ids=${workflowIds.join(',')}`, `--snapshot=${dir}`, `--output=${summaryFile}`, '--retries=0'];
			const batch = await this.cli(args, timeoutMs);
			const summary = fs.existsSync(summaryFile) ? (JSON.parse(fs.readFileSync(summaryFile, 'utf8')) as BatchSummary) : undefined;
			const results = new Map<string, ExecuteResult>();
			for (const id of workflowIds) {
				const snapshot = path.join(dir, `${id}-snapshot.json`);
				const json = fs.existsSync(snapshot) ? JSON.parse(fs.readFileSync(snapshot, 'utf8')) : undefined;
				const outcome = summary?.executions.find((execution) => execution.workflowId === id);
				const note = `\nexecute-batch: workflow ${id}: ${outcome ? `${outcome.executionStatus}${outcome.error ? `: ${outcome.error}` : ''}` : 'not run'}\n`;
				results.set(id, { ...batch, exitCode: json ? 0 : 1, stdout: batch.stdout + note, json });
			}
			return results;
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	}

	/** Everything every n8n process of this home printed so far (stdout and stderr, with the commands run). */
	logs(): string {
		return this.output.join('');
	}

	/** Appends output of a process that belongs to this home (used by the server too). */
	record(chunk: string): void {
		this.output.push(chunk);
		if (this.options.echo) process.stderr.write(chunk);
		if (this.options.logFile) fs.appendFileSync(this.options.logFile, chunk);
	}

	/** Where filesystem mode stored a binary, from its id (`filesystem-v2:<path>` or `filesystem:<path>`). */
	binaryPath(binaryId: string): string {
		const match = /^(filesystem(?:-v2)?):(.+)$/.exec(binaryId);
		if (!match) throw new Error(`not a filesystem binary data id: ${binaryId}`);
		const relative = match[2];
		// n8n 1.x stores under .n8n/binaryData; 2.x under .n8n/storage.
		const candidates = ['binaryData', 'storage'].map((base) => path.join(this.n8nFolder, base, relative));
		for (const candidate of candidates) {
			if (!path.resolve(candidate).startsWith(this.n8nFolder + path.sep)) throw new Error(`bad binary id ${binaryId}`);
			if (fs.existsSync(candidate)) return candidate;
		}
		throw new Error(`no file for binary ${binaryId}; looked at ${candidates.join(', ')}`);
	}

	/** The bytes of a binary that filesystem mode stored. */
	async binaryFile(binaryId: string): Promise<Buffer> {
		return await fs.promises.readFile(this.binaryPath(binaryId));
	}

	/** Places where a secret shows up: this home's process output and every file in the home (plain, base64, URL-encoded). */
	findSecret(secret: string): SecretHit[] {
		return findSecret(secret, this.logs(), this.dir);
	}

	/** `n8n start` on a free loopback port (or options.port), resolved once the UI and REST API answer. */
	async startServer(options: ServerOptions = {}): Promise<N8nServer> {
		return await startServer(this, options);
	}

	/** Removes a temporary home (kept when GEN_GATEWAY_E2E_KEEP=1, or when it was a folder the caller chose). */
	async dispose(): Promise<void> {
		if (this.options.dir !== undefined || process.env.GEN_GATEWAY_E2E_KEEP === '1') return;
		await fs.promises.rm(this.dir, { recursive: true, force: true });
	}

	private async importFile(kind: 'credentials' | 'workflow', content: unknown): Promise<void> {
		const file = path.join(this.dir, `import-${kind}-${randomId(8)}.json`);
		fs.writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
		try {
			const result = await this.cli([`import:${kind}`, `--input=${file}`]);
			if (result.exitCode !== 0) {
				throw new Error(`n8n import:${kind} exited with ${result.exitCode}:\n${result.stdout}\n${result.stderr}`);
			}
		} finally {
			fs.rmSync(file, { force: true });
		}
	}
}

/** Writes into the folder `target` a database n8n migrated (a plain n8n lists its workflows in an empty home: none). */
async function migratedDatabase(target: string): Promise<void> {
	const home = await N8nHome.create({ withPackage: false, emptyDatabase: true, logLevel: 'warn' });
	try {
		const result = await home.cli(['list:workflow']);
		if (result.exitCode !== 0) throw new Error(`n8n list:workflow exited with ${result.exitCode}:\n${home.logs().slice(-3000)}`);
		const files = databaseFiles(home.n8nFolder);
		if (!files.includes('database.sqlite')) throw new Error(`n8n list:workflow left no database in ${home.n8nFolder}`);
		for (const name of files) fs.copyFileSync(path.join(home.n8nFolder, name), path.join(target, name));
	} finally {
		await home.dispose();
	}
}

/** A fresh temporary home (or the folder options.dir), with our package installed. */
export async function createN8nHome(options: N8nHomeOptions = {}): Promise<N8nHome> {
	return await N8nHome.create(options);
}

/**
 * The run n8n printed: `execute --rawOutput` prints it as JSON from a line that starts with `{` on success, and as
 * a log message (`<time> info {`) on failure. Log lines before it (debug metadata may also span lines) are skipped:
 * every `{` that opens a line or a log message is tried, and the last complete JSON object with `data.resultData`
 * wins.
 */
export function parseRun(stdout: string): any { // eslint-disable-line @typescript-eslint/no-explicit-any
	// eslint-disable-next-line no-control-regex
	const text = stdout.replace(/\x1b\[[0-9;]*m/g, '');
	let found: unknown;
	const opener = /^(?:[\d:.]+\s+\w+\s+)?\{/gm;
	for (let match = opener.exec(text); match; match = opener.exec(text)) {
		const start = match.index + match[0].length - 1;
		const end = matchingBrace(text, start);
		if (end < 0) continue;
		try {
			const value = JSON.parse(text.slice(start, end + 1));
			if (value?.data?.resultData) found = value;
		} catch {
			// not JSON (a log line's metadata, say)
		}
	}
	return found;
}

/** Index of the `}` closing the `{` at `start` (JSON strings respected), or -1. */
function matchingBrace(text: string, start: number): number {
	let depth = 0;
	let inString = false;
	for (let i = start; i < text.length; i++) {
		const char = text[i];
		if (inString) {
			if (char === '\\') i++;
			else if (char === '"') inString = false;
		} else if (char === '"') inString = true;
		else if (char === '{') depth++;
		else if (char === '}' && --depth === 0) return i;
	}
	return -1;
}

function loadSettings(dir: string): HomeSettings {
	const file = path.join(dir, '.gen-gateway-home.json');
	if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as HomeSettings;
	const settings: HomeSettings = { encryptionKey: randomBytes(24).toString('hex') };
	fs.writeFileSync(file, JSON.stringify(settings, null, 2), { mode: 0o600 });
	return settings;
}
