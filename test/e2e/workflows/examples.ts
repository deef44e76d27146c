// The importable example workflows of examples/, and the credential they all name, for the e2e suite.
import * as fs from 'fs';
import * as path from 'path';

import { REPO_ROOT, type CredentialImport } from '../n8n';

/** The credential every example names; importing ours under this id makes the files run unchanged. */
export const EXAMPLE_CREDENTIAL = { id: 'GenGatewayMock01', name: 'Gen Gateway (mock)' } as const;

export const EXAMPLES_DIR = path.join(REPO_ROOT, 'examples');

export interface ExampleWorkflow {
	id: string;
	name: string;
	nodes: Array<{ name: string; type: string; parameters: Record<string, unknown> }>;
	[key: string]: unknown;
}

/** One example file, parsed (exactly as a user would import it). */
export function loadExample(file: string): ExampleWorkflow {
	return JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) as ExampleWorkflow;
}

/** Every example file name. */
export function exampleFiles(): string[] {
	return fs
		.readdirSync(EXAMPLES_DIR)
		.filter((file) => file.endsWith('.json'))
		.sort();
}

/** The credential the examples name, pointing at a service (the mock) with this key. */
export function exampleCredential(baseUrl: string, apiKey: string): CredentialImport {
	return { ...EXAMPLE_CREDENTIAL, type: 'genGatewayApi', data: { baseUrl, apiKey } };
}
