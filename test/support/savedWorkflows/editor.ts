/**
 * What n8n's editor does with a node's parameters, and what it would flag, using n8n-workflow's own helpers:
 * - opening a workflow: `getNodeParameters(properties, stored, returnDefaults=true, returnNoneDisplayed=false, …)`
 *   (every shown parameter gets its value or its default; a stored parameter the description no longer shows is gone);
 * - saving: the same with `returnDefaults=false` (a value equal to its default is not stored);
 * - the red warning on a node: `getNodeParametersIssues`.
 */
import type { INode, INodeParameters, INodeTypeDescription } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import type { HarnessNodeTypes } from '../../harness/node-types';

export interface SavedNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: INodeParameters;
	credentials?: Record<string, { id: string; name: string }>;
	webhookId?: string;
}

export interface SavedWorkflow {
	id: string;
	name: string;
	nodes: SavedNode[];
	connections: Record<string, Record<string, Array<Array<{ node: string; type: string; index: number }>>>>;
	settings?: Record<string, unknown>;
	pinData?: Record<string, unknown>;
	[key: string]: unknown;
}

/** The description n8n uses for this node at its stored typeVersion (throws for an unknown type or version). */
export function descriptionAt(nodeTypes: HarnessNodeTypes, node: Pick<SavedNode, 'type' | 'typeVersion'>): INodeTypeDescription {
	const nodeType = nodeTypes.getByName(node.type);
	const versions =
		'nodeVersions' in nodeType
			? Object.keys(nodeType.nodeVersions).map(Number)
			: ([] as number[]).concat(nodeType.description.version);
	if (!versions.includes(node.typeVersion)) {
		throw new Error(`${node.type} has no version ${node.typeVersion} (it has ${versions.join(', ')})`);
	}
	return nodeTypes.getByNameAndVersion(node.type, node.typeVersion).description;
}

/** The parameters as the editor shows them once the workflow is open (defaults filled in). */
export function openedParameters(description: INodeTypeDescription, node: SavedNode): INodeParameters {
	return NodeHelpers.getNodeParameters(description.properties, node.parameters, true, false, node, description) ?? {};
}

/** The parameters the editor stores when it saves (defaults dropped). */
export function savedParameters(description: INodeTypeDescription, node: SavedNode, parameters: INodeParameters): INodeParameters {
	return NodeHelpers.getNodeParameters(description.properties, parameters, false, false, node, description) ?? {};
}

/** Open, then save: what a saved workflow's node becomes when a user opens and saves it with the current code. */
export function reSaved(description: INodeTypeDescription, node: SavedNode): INodeParameters {
	return savedParameters(description, node, openedParameters(description, node));
}

/** The editor's warnings on this node once open (parameter issues only; credentials are checked separately). */
export function parameterIssues(description: INodeTypeDescription, node: SavedNode): string[] {
	const opened: INode = { ...node, parameters: openedParameters(description, node) };
	const issues = NodeHelpers.getNodeParametersIssues(description.properties, opened, description);
	return issues ? NodeHelpers.nodeIssuesToString(issues, opened) : [];
}
