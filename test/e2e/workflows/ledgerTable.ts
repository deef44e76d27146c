// The task ledger's Data Table in a real n8n: created through n8n's REST API as the editor does (Data tables → Create),
// with the columns docs/queue-mode.md names, and read back row by row.
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { N8nServer } from '../n8n';

export const LEDGER_TABLE_COLUMNS = [
	...['workflow_id', 'run_key', 'item_key', 'execution_id', 'state', 'task_id', 'detail'].map((name) => ({ name, type: 'string' })),
	...['lease_until', 'claims'].map((name) => ({ name, type: 'number' })),
];

async function personalProject(server: N8nServer, cookie: string): Promise<string> {
	const answer = await server.rest('GET', '/rest/projects/personal', { cookie });
	if (answer.status !== 200) throw new Error(`GET /rest/projects/personal: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
	return answer.body.data.id;
}

export interface LedgerTableRef {
	projectId: string;
	id: string;
}

export async function createLedgerTable(server: N8nServer, cookie: string, name: string): Promise<LedgerTableRef> {
	const projectId = await personalProject(server, cookie);
	const answer = await server.rest('POST', `/rest/projects/${projectId}/data-tables`, {
		cookie,
		body: { name, columns: LEDGER_TABLE_COLUMNS },
	});
	if (answer.status !== 200) throw new Error(`creating the ledger table: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
	return { projectId, id: answer.body.data.id };
}

/** Every row, read page by page (n8n answers at most `page` rows at a time). */
export async function ledgerRows(server: N8nServer, cookie: string, table: LedgerTableRef, page = 1000): Promise<any[]> {
	const rows: any[] = [];
	for (;;) {
		const answer = await server.rest('GET', `/rest/projects/${table.projectId}/data-tables/${table.id}/rows?take=${page}&skip=${rows.length}`, {
			cookie,
		});
		if (answer.status !== 200) throw new Error(`reading the ledger table: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
		const { data, count } = answer.body.data as { data: any[]; count: number };
		rows.push(...data);
		if (data.length === 0 || rows.length >= count) return rows;
	}
}
