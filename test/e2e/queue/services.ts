// Redis and PostgreSQL from Debian's packages, each a private server on a free loopback port in a temporary folder:
// what n8n's queue mode needs besides n8n. Nothing here touches a system service.
import { execFile, execFileSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { promisify } from 'util';

import { timedSync } from '../../timing/phases';
import { APT_LOCK } from '../support/paths';
import { freePort, REPO_ROOT } from '../n8n';
import { startService, tail, type ServiceProcess } from './process';

const execFileAsync = promisify(execFile);

/** Runs scripts/install-<name>.sh (idempotent; apt-get when the programs are missing, as root or `sudo -n`). */
function runInstaller(name: 'redis' | 'postgres'): void {
	const script = path.join(REPO_ROOT, 'scripts', `install-${name}.sh`);
	// stdio inherit: a first install prints apt's progress to the test's stderr.
	// One apt at a time: parallel jest workers may ask for Chromium, Redis and PostgreSQL at once.
	timedSync('install', `${name} install`, () =>
		execFileSync('flock', [APT_LOCK, 'bash', script], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 10 * 60_000 }),
	);
}

function onPath(program: string): string | undefined {
	for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
		const candidate = path.join(dir, program);
		if (dir && fs.existsSync(candidate)) return candidate;
	}
	return undefined;
}

/** Folder holding initdb, postgres and psql: Debian's /usr/lib/postgresql/<newest>/bin, else from PATH. */
function postgresBinDir(): string | undefined {
	const root = '/usr/lib/postgresql';
	const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
	for (const version of versions) {
		const dir = path.join(root, version, 'bin');
		if (['initdb', 'postgres', 'psql'].every((program) => fs.existsSync(path.join(dir, program)))) return dir;
	}
	const initdb = onPath('initdb');
	return initdb && onPath('postgres') && onPath('psql') ? path.dirname(initdb) : undefined;
}

/** Installs Redis and PostgreSQL through the repository's scripts when they are missing; returns their programs. */
export function ensureQueueServices(): { redisServer: string; postgresBin: string } {
	if (!onPath('redis-server')) runInstaller('redis');
	if (!postgresBinDir()) runInstaller('postgres');
	const redisServer = onPath('redis-server');
	const postgresBin = postgresBinDir();
	if (!redisServer) throw new Error('redis-server is missing after scripts/install-redis.sh');
	if (!postgresBin) throw new Error('initdb/postgres/psql are missing after scripts/install-postgres.sh');
	return { redisServer, postgresBin };
}

export interface RedisServer {
	host: string;
	port: number;
	process: ServiceProcess;
	stop(): Promise<void>;
}

/** Answers +PONG to PING on host:port? */
async function redisPing(host: string, port: number): Promise<boolean> {
	return await new Promise((resolve) => {
		const socket = net.connect({ host, port });
		const done = (ok: boolean) => {
			socket.destroy();
			resolve(ok);
		};
		socket.setTimeout(2000, () => done(false));
		socket.on('error', () => done(false));
		socket.on('connect', () => socket.write('PING\r\n'));
		socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
	});
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>, service: ServiceProcess): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (service.exited()) throw new Error(`${what}: the process exited:\n${tail(service.output())}`);
		if (await check()) return;
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	throw new Error(`${what}: not ready within ${timeoutMs} ms:\n${tail(service.output())}`);
}

/** redis-server on a free loopback port, nothing persisted (`--save '' --appendonly no`), working folder `dir`. */
export async function startRedis(redisServer: string, dir: string): Promise<RedisServer> {
	const host = '127.0.0.1';
	const port = await freePort();
	fs.mkdirSync(dir, { recursive: true });
	const service = startService(
		redisServer,
		['--port', String(port), '--bind', host, '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'],
		{ cwd: dir },
	);
	await until(`redis-server on ${port}`, 30_000, () => redisPing(host, port), service);
	return { host, port, process: service, stop: () => service.stop('SIGTERM', 10_000) };
}

export interface PostgresServer {
	host: string;
	port: number;
	user: string;
	database: string;
	process: ServiceProcess;
	/** Runs SQL through psql; returns its unaligned, tuples-only output (`|` between columns). */
	query(sql: string): Promise<string>;
	stop(): Promise<void>;
}

/** A user id PostgreSQL may run as: ours, or when we are root the `postgres` account (made by Debian's package). */
function postgresAccount(): { uid?: number; gid?: number } {
	if (process.getuid?.() !== 0) return {};
	for (const name of ['postgres', 'nobody']) {
		try {
			const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
			const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
			if (Number.isInteger(uid) && uid !== 0) return { uid, gid };
		} catch {
			// no such account
		}
	}
	throw new Error('running as root and found no account (postgres, nobody) to run PostgreSQL as');
}

/**
 * A throw-away PostgreSQL cluster: initdb into `dir`, trust auth for user `n8n` on 127.0.0.1 only (no Unix socket),
 * fsync off (its data dies with the test). n8n uses the `postgres` database initdb creates.
 */
export async function startPostgres(binDir: string, dir: string): Promise<PostgresServer> {
	const host = '127.0.0.1';
	const user = 'n8n';
	const database = 'postgres';
	const account = postgresAccount();
	const dataDir = path.join(dir, 'data');
	fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
	if (account.uid !== undefined) {
		// The account must reach its folder: `dir` and its parents must be searchable (0755) for it.
		fs.chmodSync(dir, 0o755);
		fs.chownSync(dataDir, account.uid, account.gid!);
	}
	await execFileAsync(
		path.join(binDir, 'initdb'),
		['-D', dataDir, '-U', user, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
		{ ...account, cwd: '/', timeout: 120_000 },
	);
	const port = await freePort();
	const service = startService(
		path.join(binDir, 'postgres'),
		[
			'-D', dataDir,
			'-p', String(port),
			'-h', host,
			'-k', '',
			'-c', 'fsync=off',
			'-c', 'synchronous_commit=off',
			'-c', 'full_page_writes=off',
		],
		{ ...account, cwd: '/' },
	);
	const psql = path.join(binDir, 'psql');
	const query = async (sql: string) =>
		(
			await execFileAsync(psql, ['-h', host, '-p', String(port), '-U', user, '-d', database, '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], {
				timeout: 30_000,
			})
		).stdout.trim();
	await until(
		`postgres on ${port}`,
		60_000,
		async () => {
			try {
				return (await query('select 1')) === '1';
			} catch {
				return false;
			}
		},
		service,
	);
	// SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for n8n's pooled connections).
	return { host, port, user, database, process: service, query, stop: () => service.stop('SIGINT', 15_000) };
}
