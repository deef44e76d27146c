// The workflow the task-ledger e2e files run: a production Webhook (answers at once) → Split Out of `body.prompts` →
// Generate with Options → Task Ledger set from the webhook body (`body.ledger`: the Data Table's ID), waiting in process.
import { randomUUID } from 'crypto';

import { FRESH_CONNECTION, nodeType, randomId } from '../n8n';
import type { ExecutionSummary } from './executions';

export const GENERATE_NODE = 'Generate Video';

/** A production Webhook that answers at once; the run goes on after the answer. */
function webhookNode(path: string): Record<string, unknown> {
	return {
		id: randomId(8),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
	};
}

export interface LedgerWorkflowOptions {
	id: string;
	webhookPath: string;
	credential: { id: string; name: string };
	/** Generate's Max Concurrency (default 5). */
	maxConcurrency?: number;
	/** Generate continues on fail (n8n's On Error → Continue): a failing item becomes an error item. */
	continueOnFail?: boolean;
	/**
	 * Generate without Wait for Completion, then n8n's Wait node for this many seconds (a number or an expression; under
	 * 65: held in memory, the execution running): a kill then comes after Generate finished.
	 */
	waitAfterSeconds?: number | string;
}

export const WAIT_AFTER_NODE = 'Wait After Generate';

export function ledgerWorkflow(options: LedgerWorkflowOptions): Record<string, unknown> & { id: string } {
	const { id, webhookPath, credential, maxConcurrency = 5, continueOnFail = false, waitAfterSeconds } = options;
	const waitAfter = waitAfterSeconds !== undefined;
	return {
		id,
		name: `Ledger: webhook → prompts → video (${webhookPath})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(webhookPath),
			{
				id: randomId(8),
				name: 'One Item per Prompt',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [220, 0],
				parameters: { fieldToSplitOut: 'body.prompts', options: {} },
			},
			{
				// A fixed node id: the ledger's identity names the node by it.
				id: 'c0ffee00-1111-4222-8333-444455556666',
				name: GENERATE_NODE,
				type: nodeType('genGatewayVideo'),
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					operation: 'generate',
					model: 'sd_2.0_fast_discount',
					prompt: "={{ $json['body.prompts'] }}",
					duration: 5,
					...(waitAfter ? { waitForCompletion: false } : {}),
					options: {
						pollInterval: 1,
						maxConcurrency,
						taskLedger: "={{ $('Webhook').first().json.body.ledger }}",
					},
				},
				credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
				...(continueOnFail ? { onError: 'continueRegularOutput' } : {}),
			},
			...(waitAfter
				? [
						{
							id: randomId(8),
							name: WAIT_AFTER_NODE,
							type: 'n8n-nodes-base.wait',
							typeVersion: 1.1,
							position: [660, 0],
							webhookId: randomUUID(),
							parameters: { resume: 'timeInterval', amount: waitAfterSeconds, unit: 'seconds' },
						},
					]
				: []),
		],
		connections: {
			Webhook: { main: [[{ node: 'One Item per Prompt', type: 'main', index: 0 }]] },
			'One Item per Prompt': { main: [[{ node: GENERATE_NODE, type: 'main', index: 0 }]] },
			...(waitAfter ? { [GENERATE_NODE]: { main: [[{ node: WAIT_AFTER_NODE, type: 'main', index: 0 }]] } } : {}),
		},
	};
}

export const RECOVER_NODE = 'Recover Paid Tasks';

/** Webhook (`body.ledger`, `body.workflow`) → Recover: the unfinished paid tasks of that workflow's ledger. */
export function recoverWorkflow(options: Omit<LedgerWorkflowOptions, 'maxConcurrency' | 'continueOnFail' | 'waitAfterSeconds'>) {
	const { id, webhookPath, credential } = options;
	return {
		id,
		name: `Ledger: Recover (${webhookPath})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(webhookPath),
			{
				id: randomId(8),
				name: RECOVER_NODE,
				type: nodeType('genGatewayVideo'),
				typeVersion: 1,
				position: [220, 0],
				parameters: { operation: 'recover', taskLedger: '={{ $json.body.ledger }}', workflowId: '={{ $json.body.workflow }}' },
				credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
			},
		],
		connections: { Webhook: { main: [[{ node: RECOVER_NODE, type: 'main', index: 0 }]] } },
	};
}

/** Polls `probe` every 250 ms until it answers something (a probe may throw to stop early with its own message). */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const value = await probe();
		if (value !== undefined) return value;
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
	throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/**
 * The workflow's own executions. The ledger's sub-workflow runs carry the workflow's id (n8n gives an inline
 * sub-workflow its caller's): one cut by the kill stays in the list as `crashed`, mode `integrated`.
 */
export const own = (list: ExecutionSummary[]) => list.filter((execution) => execution.mode !== 'integrated');

/** POSTs JSON to a production webhook of `serverUrl` (these workflows answer at once); the answer's status. */
export async function postWebhook(serverUrl: string, webhookPath: string, body: unknown): Promise<number> {
	const answer = await fetch(`${serverUrl}/webhook/${webhookPath}`, {
		method: 'POST',
		headers: { ...FRESH_CONNECTION, 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	return answer.status;
}
