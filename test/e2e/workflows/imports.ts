// Several workflows in one `n8n import:workflow` (each CLI call is a cold n8n start of several seconds), for a home
// without a server; with one, `server.importWorkflows` and `server.activateWorkflows` (support/server.ts) do it over REST.
import * as fs from 'fs';
import * as path from 'path';

import { randomId, type N8nHome } from '../n8n';

/** Imports all the workflows with one CLI process; each keeps its id (or gets a random one). Returns the ids. */
export async function importWorkflows(home: N8nHome, workflows: Array<Record<string, unknown>>): Promise<string[]> {
	const prepared = workflows.map((workflow) => ({
		active: false,
		settings: { executionOrder: 'v1' },
		connections: {},
		...workflow,
		id: typeof workflow.id === 'string' ? workflow.id : randomId(),
	}));
	const file = path.join(home.dir, `import-workflows-${randomId(8)}.json`);
	fs.writeFileSync(file, JSON.stringify(prepared), { mode: 0o600 });
	try {
		const result = await home.cli(['import:workflow', `--input=${file}`]);
		if (result.exitCode !== 0) {
			throw new Error(`n8n import:workflow exited with ${result.exitCode}:\n${result.stdout}\n${result.stderr}`);
		}
	} finally {
		fs.rmSync(file, { force: true });
	}
	return prepared.map((workflow) => workflow.id);
}
