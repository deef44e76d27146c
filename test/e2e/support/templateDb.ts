// A migrated, empty n8n database for each new SQLite home, copied in before its first n8n process, instead of each
// home's first process running every migration on an empty database: 266 of them on 2.41.1 (119 on 1.123.81), about
// 2 s of CPU (a first CLI import took 5.1 s on a quiet machine, the next ones 3.1 s), in each of the 26 homes an
// `npm test` makes. A copy takes milliseconds. The migrations n8n runs on a database are the same whoever runs them first: the
// template is made by n8n itself (`n8n list:workflow` in an empty home with a package-less n8n's environment), once
// per n8n install, kept beside that install under its version, and every later process of a home still runs n8n's
// migration check on it (a newer n8n would migrate the copy further). The template holds no credential and no key:
// each home keeps its own encryption key.
import * as fs from 'fs';
import * as path from 'path';

import type { N8nInstall } from './install';

/** A lock older than this is a dead maker's (making takes seconds): taken over. */
const STALE_LOCK_MS = 180_000;
const POLL_MS = 200;

/** The template of one install: a folder beside it, named by the version it was migrated by. */
export function templatePath(install: N8nInstall): string {
	return path.join(install.dir, `.gen-gateway-template-${install.version}`);
}

/**
 * The files of an n8n SQLite database in a folder: n8n leaves its last migrations in the write-ahead log
 * (database.sqlite-wal) when it exits, so the log goes with the file (58 of 266 migrations ran again without it).
 * The shared-memory index (-shm) is rebuilt from the log by whoever opens it next.
 */
export function databaseFiles(folder: string): string[] {
	return fs.readdirSync(folder).filter((name) => name === 'database.sqlite' || name === 'database.sqlite-wal');
}

const making = new Map<string, Promise<string>>();

/**
 * Copies the install's template database into `n8nFolder` (the home's `.n8n`) when the home has no database yet;
 * `make` writes a migrated database's files into the folder it is given (called once per install, by whichever process comes
 * first; the others wait for its file). Returns whether the home got the copy.
 */
export async function seedDatabase(n8nFolder: string, install: N8nInstall, make: (target: string) => Promise<void>): Promise<boolean> {
	const database = path.join(n8nFolder, 'database.sqlite');
	if (fs.existsSync(database)) return false;
	const template = templatePath(install);
	let made = making.get(template);
	if (!made) {
		made = ensureTemplate(template, make);
		making.set(template, made);
		made.catch(() => making.delete(template));
	}
	await made;
	fs.mkdirSync(n8nFolder, { recursive: true });
	for (const name of databaseFiles(template)) fs.copyFileSync(path.join(template, name), path.join(n8nFolder, name));
	return true;
}

/** The template, made under a lock folder (mkdir is atomic) and moved into place whole (rename of its folder). */
async function ensureTemplate(template: string, make: (target: string) => Promise<void>): Promise<string> {
	const lock = `${template}.lock`;
	while (!fs.existsSync(template)) {
		if (takeLock(lock)) {
			try {
				if (fs.existsSync(template)) break;
				const partial = `${template}.${process.pid}.partial`;
				fs.rmSync(partial, { recursive: true, force: true });
				fs.mkdirSync(partial);
				try {
					await make(partial);
					fs.renameSync(partial, template);
				} finally {
					fs.rmSync(partial, { recursive: true, force: true });
				}
			} finally {
				fs.rmSync(lock, { recursive: true, force: true });
			}
			break;
		}
		// Another process is making it: wait for its file.
		if (lockAgeMs(lock) > STALE_LOCK_MS) fs.rmSync(lock, { recursive: true, force: true });
		await new Promise((resolve) => setTimeout(resolve, POLL_MS));
	}
	return template;
}

function lockAgeMs(lock: string): number {
	try {
		return Date.now() - fs.statSync(lock).mtimeMs;
	} catch {
		return 0;
	}
}

function takeLock(lock: string): boolean {
	try {
		fs.mkdirSync(lock);
		return true;
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
		throw error;
	}
}
