// The template database of the e2e homes (test/e2e/support/templateDb.ts): made once per install by whichever caller
// comes first, copied into homes that have no database, never over one they have; a dead maker's lock is taken over.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import type { N8nInstall } from '../e2e/support/install';
import { seedDatabase, templatePath } from '../e2e/support/templateDb';

let root: string;
beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'template-db-'))));
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const installIn = (name: string) => {
	const dir = path.join(root, name);
	fs.mkdirSync(dir);
	return { major: 2, version: '9.9.9', dir, binDir: dir, n8nBin: dir, path: dir } as N8nInstall;
};
const homeFolder = (name: string) => path.join(root, 'homes', name, '.n8n');
const read = (folder: string, name = 'database.sqlite') => fs.readFileSync(path.join(folder, name), 'utf8');

/** A maker that writes a database and its log after a short while, counting its calls. */
function maker(content = 'migrated') {
	const calls: string[] = [];
	const make = async (target: string) => {
		calls.push(target);
		await new Promise((resolve) => setTimeout(resolve, 30));
		fs.writeFileSync(path.join(target, 'database.sqlite'), content);
		fs.writeFileSync(path.join(target, 'database.sqlite-wal'), `${content} log`);
		fs.writeFileSync(path.join(target, 'database.sqlite-shm'), 'index');
	};
	return { calls, make };
}

it('made once for many homes at once; each gets the database and its log, not the shared-memory index', async () => {
	const install = installIn('n8n');
	const { calls, make } = maker();
	const homes = ['a', 'b', 'c', 'd', 'e'].map(homeFolder);
	expect(await Promise.all(homes.map((home) => seedDatabase(home, install, make)))).toEqual([true, true, true, true, true]);
	expect(calls).toHaveLength(1);
	for (const home of homes) {
		expect(fs.readdirSync(home).sort()).toEqual(['database.sqlite', 'database.sqlite-wal']);
		expect([read(home), read(home, 'database.sqlite-wal')]).toEqual(['migrated', 'migrated log']);
	}
	expect(fs.readdirSync(install.dir)).toEqual([path.basename(templatePath(install))]);
});

it('never copied over a database a home has (npm start keeps its .n8n-dev)', async () => {
	const install = installIn('n8n');
	const home = homeFolder('kept');
	fs.mkdirSync(home, { recursive: true });
	fs.writeFileSync(path.join(home, 'database.sqlite'), 'mine');
	const { calls, make } = maker();
	expect(await seedDatabase(home, install, make)).toBe(false);
	expect(read(home)).toBe('mine');
	expect(calls).toEqual([]);
});

it("waits for another process's template, and takes over a dead maker's lock", async () => {
	const install = installIn('n8n');
	const template = templatePath(install);
	fs.mkdirSync(`${template}.lock`);
	const { calls, make } = maker('mine');
	const seeded = seedDatabase(homeFolder('a'), install, make);
	// The other process moves its finished template into place.
	await new Promise((resolve) => setTimeout(resolve, 300));
	fs.mkdirSync(`${template}.other`);
	fs.writeFileSync(path.join(`${template}.other`, 'database.sqlite'), 'theirs');
	fs.renameSync(`${template}.other`, template);
	fs.rmSync(`${template}.lock`, { recursive: true });
	await seeded;
	expect(read(homeFolder('a'))).toBe('theirs');
	expect(calls).toEqual([]);

	const other = installIn('other');
	const stale = `${templatePath(other)}.lock`;
	fs.mkdirSync(stale);
	const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
	fs.utimesSync(stale, tenMinutesAgo, tenMinutesAgo);
	await seedDatabase(homeFolder('b'), other, make);
	expect(read(homeFolder('b'))).toBe('mine');
	expect(calls).toHaveLength(1);
	expect(fs.existsSync(stale)).toBe(false);
});

it('a maker that fails leaves no template and no lock: the next home makes it', async () => {
	const install = installIn('n8n');
	const failing = async () => {
		throw new Error('n8n list:workflow exited with 1');
	};
	await expect(seedDatabase(homeFolder('a'), install, failing)).rejects.toThrow('exited with 1');
	expect(fs.readdirSync(install.dir)).toEqual([]);
	const { calls, make } = maker();
	expect(await seedDatabase(homeFolder('b'), install, make)).toBe(true);
	expect(calls).toHaveLength(1);
});
