// The benchmark's world: the mock service as its own process, n8n homes with our package, one credential each.
import * as fs from 'fs';
import * as path from 'path';

import { spawnMockProcess, type MockClient } from '../test/mock/process';
import { createN8nHome, ensureBuilt, PACKAGE_NAME, randomId, REPO_ROOT, type N8nHome } from '../test/e2e/n8n';
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
async function homeWithCredential(mock: MockClient, withPackage: boolean): Promise<BenchHome> {
	const home = await createN8nHome({ build: true, logLevel: 'info', withPackage });
	const credential = { id: randomId(), name: 'Gen Gateway (bench)' };
	if (!withPackage) linkBufferedPackage(home);
	await home.importCredential({
		...credential,
		type: 'genGatewayApi',
		data: { baseUrl: mock.url, apiKey: mock.apiKey },
	});
	return { home, credential };
}

/** A home with this package as built (dist/), linked in as a community package. */
export async function benchHome(mock: MockClient): Promise<BenchHome> {
	return await homeWithCredential(mock, true);
}

/**
 * A home whose copy of the package reads the download into one Buffer before storing it: the transport asks n8n's
 * HTTP helper for `arraybuffer` instead of `stream`, nothing else changes. This is what a node that does not stream
 * does, and the honest "buffers the whole body" comparison for the memory benchmark.
 */
export async function bufferedHome(mock: MockClient): Promise<BenchHome> {
	ensureBuilt({ build: true });
	return await homeWithCredential(mock, false);
}

const STREAM_OPTION = "encoding: stream ? 'stream' : undefined";
const BUFFER_OPTION = "encoding: stream ? 'arraybuffer' : undefined";

function linkBufferedPackage(home: N8nHome): void {
	const copy = path.join(WORK_DIR, 'buffered-package');
	fs.rmSync(copy, { recursive: true, force: true });
	fs.mkdirSync(copy, { recursive: true });
	fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(copy, 'package.json'));
	fs.cpSync(path.join(REPO_ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
	const transport = path.join(copy, 'dist', 'nodes', 'shared', 'transport.js');
	const source = fs.readFileSync(transport, 'utf8');
	if (source.split(STREAM_OPTION).length !== 2) {
		throw new Error(`bench: cannot make the buffered variant, "${STREAM_OPTION}" is not once in ${transport}`);
	}
	fs.writeFileSync(transport, source.replace(STREAM_OPTION, BUFFER_OPTION));
	// Resolves n8n-workflow from the repository's node_modules, as the real package does through its symlink.
	const modules = path.join(home.n8nFolder, 'nodes', 'node_modules');
	fs.mkdirSync(modules, { recursive: true });
	fs.symlinkSync(copy, path.join(modules, PACKAGE_NAME), 'dir');
}
