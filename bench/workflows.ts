// The workflows the benchmarks run: our Video node, n8n's HTTP Request node on the same content endpoint, a batch
// of rows, and a one-item-at-a-time loop.
import { linearWorkflow, nodeType, randomId, TRIGGER_NAME, type NodeSpec } from '../test/e2e/n8n';

export interface CredentialRef {
	id: string;
	name: string;
}

export interface GenerateOptions {
	/** The prompt, with the mock's markers (e.g. `[[instant]] [[size=512M]]`), or an expression. */
	prompt: string;
	/** Download the video into binary data (the node's default: true). */
	download?: boolean;
	/** Unset = the node's default (5). */
	maxConcurrency?: number;
}

/** Gen Gateway Video, Generate with `gk_1.5` (no required fields beyond the prompt); poll interval left at its default. */
export function generateNode(name: string, credential: CredentialRef, options: GenerateOptions): NodeSpec {
	return {
		name,
		type: nodeType('genGatewayVideo'),
		parameters: {
			operation: 'generate',
			model: 'gk_1.5',
			prompt: options.prompt,
			downloadVideo: options.download ?? true,
			options: options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency },
		},
		credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
	};
}

/**
 * n8n's own HTTP Request node (v4.2) fetching the task's content endpoint as a file, authenticated with our
 * credential (its generic Bearer header), the task id from the previous node's output.
 */
export function httpDownloadNode(name: string, credential: CredentialRef, baseUrl: string): NodeSpec {
	return {
		name,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			method: 'GET',
			url: `=${baseUrl}/v1/tasks/{{ $json.task_id }}/artifacts/video/content`,
			authentication: 'predefinedCredentialType',
			nodeCredentialType: 'genGatewayApi',
			options: { response: { response: { responseFormat: 'file' } } },
		},
		credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
	};
}

export const SETTLE_NAME = 'Settle';

/**
 * n8n's Wait node for a few seconds (in-process below 65 s). `n8n execute` launches its task runner when the
 * execution starts; the runner's start-up (about 130 MB and 2 s of CPU) would otherwise overlap the node's work and
 * be counted as its memory and time. After this wait the process is idle and steady.
 */
export function settleNode(seconds: number): NodeSpec {
	return {
		name: SETTLE_NAME,
		type: 'n8n-nodes-base.wait',
		typeVersion: 1.1,
		parameters: { resume: 'timeInterval', amount: seconds, unit: 'seconds' },
	};
}

/** A Set node (raw JSON) then Split Out: one item per prompt. */
export function rowsNodes(prompts: string[]): NodeSpec[] {
	return [
		{
			name: 'Rows',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			parameters: { mode: 'raw', jsonOutput: JSON.stringify({ rows: prompts.map((prompt) => ({ prompt })) }) },
		},
		{
			name: 'One Item per Row',
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			parameters: { fieldToSplitOut: 'rows', options: {} },
		},
	];
}

export { linearWorkflow };

export const LOOP_NAME = 'One at a Time';

/**
 * Trigger → `before` → Loop Over Items (batch size 1) → `body` → back to the loop: every item is submitted, waited
 * for and downloaded before the next one starts, as a node that awaits its tasks one by one would do.
 */
export function loopWorkflow(name: string, before: NodeSpec[], body: NodeSpec): Record<string, unknown> {
	const loop: NodeSpec = {
		name: LOOP_NAME,
		type: 'n8n-nodes-base.splitInBatches',
		typeVersion: 3,
		parameters: { batchSize: 1, options: {} },
	};
	const chain = [{ name: TRIGGER_NAME, type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} }, ...before, loop];
	const connections = chainConnections(chain);
	// Output 0 of the loop is "done" (nothing follows), output 1 the next batch.
	connections[LOOP_NAME] = { main: [[], [{ node: body.name, type: 'main', index: 0 }]] };
	connections[body.name] = { main: [[{ node: LOOP_NAME, type: 'main', index: 0 }]] };
	return workflowOf(name, [...chain, body], connections);
}

/** Connections that run `nodes` one after the other (output 0 of each into the next). */
export function chainConnections(nodes: Array<{ name: string }>): Record<string, unknown> {
	const connections: Record<string, unknown> = {};
	for (let i = 0; i + 1 < nodes.length; i++) {
		connections[nodes[i].name] = { main: [[{ node: nodes[i + 1].name, type: 'main', index: 0 }]] };
	}
	return connections;
}

/** A workflow as `n8n import:workflow` takes it: ids, nodes in a row, version 1 and no parameters where a node says none. */
export function workflowOf(
	name: string,
	nodes: ReadonlyArray<{ name: string }>,
	connections: Record<string, unknown>,
): Record<string, unknown> {
	return {
		id: randomId(),
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		connections,
		nodes: nodes.map((node, index) => ({
			id: `${randomId(8)}-${index}`,
			typeVersion: 1,
			parameters: {},
			position: [index * 220, 0],
			...node,
		})),
	};
}
