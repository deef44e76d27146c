/**
 * What n8n's editor does with a node's parameters, and what it would flag, using n8n-workflow's own helpers:
 * - opening a workflow: `getNodeParameters(properties, stored, returnDefaults=true, returnNoneDisplayed=false, …)`
 *   (every shown parameter gets its value or its default; a stored parameter the description no longer shows is gone);
 * - saving: the same with `returnDefaults=false` (a value equal to its default is not stored);
 * - the red warning on a node: `getNodeParametersIssues`.
 */
import type { INode, INodeParameters, INodeProperties, INodePropertyCollection, INodeTypeDescription } from 'n8n-workflow';
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

/**
 * The editor's other red warning, from its parameter input rather than n8n-workflow: an options or multiOptions value
 * that is not among the parameter's options ('The value "x" is not supported!'). Lists from loadOptions are skipped.
 */
export function unsupportedValues(description: INodeTypeDescription, node: SavedNode): string[] {
	const found: string[] = [];
	const walk = (properties: INodeProperties[], values: INodeParameters, root: INodeParameters, at: string) => {
		for (const property of properties) {
			const value = values[property.name];
			if (value === undefined) continue;
			if (!NodeHelpers.displayParameter(values, property, node, description, root)) continue;
			const here = at ? `${at}.${property.name}` : property.name;
			if (property.type === 'options' || property.type === 'multiOptions') {
				if (property.typeOptions?.loadOptionsMethod || property.typeOptions?.loadOptions) continue;
				const allowed = (property.options ?? []).map((option) => (option as { value?: unknown }).value);
				for (const one of property.type === 'multiOptions' && Array.isArray(value) ? value : [value]) {
					if (typeof one === 'string' && one.startsWith('=')) continue;
					if (!allowed.includes(one)) found.push(`${here}: the value ${JSON.stringify(one)} is not supported`);
				}
			} else if (property.type === 'collection' && value && typeof value === 'object') {
				walk(property.options as INodeProperties[], value as INodeParameters, root, here);
			} else if (property.type === 'fixedCollection' && value && typeof value === 'object') {
				for (const group of property.options as INodePropertyCollection[]) {
					const entries = (value as Record<string, unknown>)[group.name];
					const list = Array.isArray(entries) ? entries : entries === undefined ? [] : [entries];
					list.forEach((entry, index) => walk(group.values, entry as INodeParameters, root, `${here}.${group.name}[${index}]`));
				}
			}
		}
	};
	const opened = openedParameters(description, node);
	walk(description.properties, opened, opened, '');
	return found;
}
