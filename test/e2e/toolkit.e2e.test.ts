// The e2e toolkit itself, against n8n's own nodes (independent of our package and of dist/): runs are parsed,
// binaries stored in filesystem mode are found from their ids, the secret scan does find what is there, and a new home
// starts from the install's migrated database.
import { createHash, randomBytes } from 'crypto';
import * as http from 'http';
import type { AddressInfo } from 'net';

import { createN8nHome, linearWorkflow, nodeItems, nodeJson, randomId, type N8nHome } from './n8n';
import { databaseFiles, templatePath } from './support/templateDb';

const SETUP_TIMEOUT = 20 * 60_000;
const RUN_TIMEOUT = 3 * 60_000;

describe('e2e toolkit on a real n8n', () => {
	const payload = randomBytes(300_000);
	let server: http.Server;
	let baseUrl: string;
	let home: N8nHome;

	beforeAll(async () => {
		server = http.createServer((_req, res) => {
			res.setHeader('content-type', 'image/png');
			res.end(payload);
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		home = await createN8nHome({ withPackage: false });
	}, SETUP_TIMEOUT);

	afterAll(async () => {
		await home?.dispose();
		await new Promise((resolve) => server?.close(resolve));
	});

	it(
		'reads a binary that filesystem mode stored, byte for byte, and finds planted markers',
		async () => {
			const marker = `marker-${randomId(20)}`;
			const encoded = Buffer.from(`prefix:${marker}:suffix`).toString('base64');
			const id = await home.importWorkflow(
				linearWorkflow('toolkit', [
					{
						name: 'Download',
						type: 'n8n-nodes-base.httpRequest',
						typeVersion: 4.2,
						parameters: { url: `${baseUrl}/file.png`, options: { response: { response: { responseFormat: 'file' } } } },
					},
					{
						name: 'Plant',
						type: 'n8n-nodes-base.set',
						typeVersion: 3.4,
						parameters: {
							includeOtherFields: true,
							assignments: {
								assignments: [
									{ id: 'a', name: 'plain', value: marker, type: 'string' },
									{ id: 'b', name: 'encoded', value: encoded, type: 'string' },
								],
							},
							options: {},
						},
					},
				]),
			);

			const run = await home.execute(id);

			expect(run.exitCode).toBe(0);
			const binary = nodeItems(run.json, 'Download')[0].binary.data;
			expect(binary.id).toMatch(/^filesystem(-v2)?:/);
			const stored = await home.binaryFile(binary.id);
			const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
			expect({ length: stored.length, sha: sha(stored) }).toEqual({ length: payload.length, sha: sha(payload) });
			expect(nodeJson(run.json, 'Plant')[0]).toMatchObject({ plain: marker, encoded });

			const hits = home.findSecret(marker);
			expect(hits).toContainEqual({ where: 'process output', form: 'plain' });
			expect(hits).toContainEqual({ where: 'process output', form: 'base64' });
			expect(hits.some((hit) => hit.where.startsWith(`${home.n8nFolder}/database.sqlite`))).toBe(true);
			expect(home.findSecret(`absent-${randomId(20)}`)).toEqual([]);
		},
		RUN_TIMEOUT,
	);

	it(
		"starts a new home from the install's migrated database: its first n8n process runs no migration (an empty one runs them all)",
		async () => {
			const seeded = await createN8nHome({ withPackage: false });
			const empty = await createN8nHome({ withPackage: false, emptyDatabase: true });
			try {
				const runs = await Promise.all([seeded.cli(['list:workflow']), empty.cli(['list:workflow'])]);
				expect(runs.map((run) => run.exitCode)).toEqual([0, 0]);
				const migrations = (of: N8nHome) => of.logs().match(/Starting migration \w+/g) ?? [];
				expect(migrations(empty).length).toBeGreaterThan(100);
				expect(migrations(seeded)).toEqual([]);
				expect(databaseFiles(templatePath(seeded.install))).toContain('database.sqlite');
			} finally {
				await seeded.dispose();
				await empty.dispose();
			}
		},
		RUN_TIMEOUT,
	);
});
