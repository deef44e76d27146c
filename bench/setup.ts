// The benchmark's world: the mock service as its own process, n8n homes with our package, one credential each.
import * as fs from 'fs';
import * as path from 'path';

import { spawnMockProcess, type MockClient } from '../test/mock/process';
import { createN8nHome, installedPackageDir, randomId, REPO_ROOT, type N8nHome } from '../test/e2e/n8n';
import type { CredentialRef } from './workflows';

export const WORK_DIR = path.join(REPO_ROOT, 'bench', '.work');

export interface BenchHome {
	home: N8nHome;
	credential: CredentialRef;
}

export async function startMock(): Promise<MockClient> {
	return await spawnMockProcess({ apiKey: `bench-${randomId(20)}` });
}

/** A home at info level (debug logging of every poll would cost the node time it does not cost in production). */
async function homeWithCredential(mock: MockClient, buffered: boolean): Promise<BenchHome> {
	const home = await createN8nHome({ build: true, logLevel: 'info' });
	const credential = { id: randomId(), name: 'Gen Gateway (bench)' };
	if (buffered) makeBuffered(home);
	await home.importCredential({
		...credential,
		type: 'genGatewayApi',
		data: { baseUrl: mock.url, apiKey: mock.apiKey },
	});
	return { home, credential };
}

/** A home with this package as built (dist/), installed as n8n installs a community package. */
export async function benchHome(mock: MockClient): Promise<BenchHome> {
	return await homeWithCredential(mock, false);
}

/**
 * A home whose copy of the package reads the download into one Buffer before storing it: the transport asks n8n's
 * HTTP helper for `arraybuffer` instead of `stream`, and hands the rest of the node that Buffer as a stream of one
 * chunk (the node's download code, since the transport closes and checks streams, needs a stream to work on). This is
 * what a node that does not stream does, and the honest "buffers the whole body" comparison for the memory benchmark.
 */
export async function bufferedHome(mock: MockClient): Promise<BenchHome> {
	return await homeWithCredential(mock, true);
}

/** Each patch of the compiled transport: what must be there exactly once, and what replaces it. */
const BUFFERED_PATCHES: Array<[string, string]> = [
	["encoding: stream ? 'stream' : undefined", "encoding: stream ? 'arraybuffer' : undefined"],
	[
		'function streamResponse(response, hangUp) {\n    const body = response.body;',
		"function streamResponse(response, hangUp) {\n    const body = Buffer.isBuffer(response.body) ? require('stream').Readable.from([response.body], { objectMode: false }) : response.body;",
	],
];

/** Patches the home's installed copy of the package (never the checkout) into the buffering variant. */
function makeBuffered(home: N8nHome): void {
	const transport = path.join(installedPackageDir(home.dir), 'dist', 'nodes', 'shared', 'transport', 'transport.js');
	let source = fs.readFileSync(transport, 'utf8');
	for (const [from, to] of BUFFERED_PATCHES) {
		if (source.split(from).length !== 2) throw new Error(`bench: cannot make the buffered variant, "${from}" is not once in ${transport}`);
		source = source.replace(from, to);
	}
	fs.writeFileSync(transport, source);
}
