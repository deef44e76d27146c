import type { IConnections, INode } from 'n8n-workflow';

import { HARNESS_NODE_TYPES } from './helper-nodes';
import type { HarnessNodeTypes } from './node-types';
import { latestVersion } from './node-types';

/** One node of a harness workflow (see engine.ts for the field meanings). */
export interface HarnessNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	typeVersion?: number;
	/** true: the genGatewayApi credential (CREDENTIAL_REF); an id and name: the same data under another credential. */
	credentials?: boolean | { id: string; name: string };
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	continueOnFail?: boolean;
	onError?: 'continueErrorOutput' | 'continueRegularOutput' | 'stopWorkflow';
	/** Also connect main output 0 back to this (earlier) node: a loop, as Loop Over Items builds one. */
	loopBackTo?: string;
}

export const START_NODE_NAME = 'Start';
export const ITEMS_NODE_NAME = 'Items';
export const CREDENTIAL_TYPE = 'genGatewayApi';
export const CREDENTIAL_REF = { id: 'harnessCredential1', name: 'Gen Gateway account' };

/** The workflow's nodes and connections: Start → (Items) → nodes[0] → nodes[1] → … on main output 0. */
export function buildWorkflowGraph(
	nodes: HarnessNode[],
	input: Array<Record<string, unknown>> | undefined,
	nodeTypes: HarnessNodeTypes,
): { nodes: INode[]; connections: IConnections } {
	const names = new Set<string>([START_NODE_NAME, ITEMS_NODE_NAME]);
	for (const node of nodes) {
		if (names.has(node.name)) throw new Error(`test harness: node name "${node.name}" is used twice or reserved`);
		names.add(node.name);
	}

	const built: INode[] = [
		{ id: 'harness-start', name: START_NODE_NAME, type: HARNESS_NODE_TYPES.start, typeVersion: 1, position: [0, 0], parameters: {} },
	];
	if (input) {
		built.push({
			id: 'harness-items',
			name: ITEMS_NODE_NAME,
			type: HARNESS_NODE_TYPES.items,
			typeVersion: 1,
			position: [200, 0],
			parameters: { items: JSON.stringify(input) },
		});
	}
	nodes.forEach((node, index) => {
		const type = nodeTypes.fullType(node.type);
		built.push({
			id: `harness-node-${index + 1}`,
			name: node.name,
			type,
			typeVersion: node.typeVersion ?? latestVersion(nodeTypes.getByName(type)),
			position: [400 + index * 200, 0],
			parameters: node.parameters as INode['parameters'],
			...(node.credentials
				? { credentials: { [CREDENTIAL_TYPE]: { ...(node.credentials === true ? CREDENTIAL_REF : node.credentials) } } }
				: {}),
			...(node.retryOnFail !== undefined ? { retryOnFail: node.retryOnFail } : {}),
			...(node.maxTries !== undefined ? { maxTries: node.maxTries } : {}),
			...(node.waitBetweenTries !== undefined ? { waitBetweenTries: node.waitBetweenTries } : {}),
			...(node.continueOnFail !== undefined ? { continueOnFail: node.continueOnFail } : {}),
			...(node.onError !== undefined ? { onError: node.onError } : {}),
		});
	});

	const connections: IConnections = {};
	for (let i = 0; i + 1 < built.length; i++) {
		connections[built[i].name] = { main: [[{ node: built[i + 1].name, type: 'main', index: 0 }]] };
	}
	for (const node of nodes) {
		if (!node.loopBackTo) continue;
		const outputs = (connections[node.name] ??= { main: [[]] }).main;
		outputs[0] = [...(outputs[0] ?? []), { node: node.loopBackTo, type: 'main', index: 0 }];
	}
	return { nodes: built, connections };
}
