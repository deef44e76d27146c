/** Turns the authored spec (spec.ts) into workflows as n8n 2.41.1's editor exports them ("Download"). */
import { createHash } from 'node:crypto';

import { descriptionAt, reSaved } from './editor';
import type { SavedNode, SavedWorkflow } from './editor';
import { PACKAGE_PREFIX, fixtureNodeTypes } from './nodeTypes';
import type { SpecWorkflow } from './spec';

export const CREDENTIAL = { id: 'GgFixtureCred001', name: 'Gen Gateway account' };

const hash = (text: string) => createHash('sha256').update(text).digest('hex');
/** A stable uuid-shaped id, as the editor gives each node. */
const uuid = (seed: string) => {
	const h = hash(seed);
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

export function buildSavedWorkflow(spec: SpecWorkflow, version: string): SavedWorkflow {
	const nodeTypes = fixtureNodeTypes();
	const nodes = spec.nodes.map((node): SavedNode => {
		const ours = !node.type.includes('.');
		const type = ours ? `${PACKAGE_PREFIX}${node.type}` : node.type;
		const typeVersion = node.typeVersion ?? 1;
		const draft: SavedNode = {
			parameters: node.parameters as SavedNode['parameters'],
			type,
			typeVersion,
			position: node.position,
			id: uuid(`${version}/${spec.file}/${node.name}`),
			name: node.name,
		};
		// Our nodes go through the editor's open-and-save (the stand-ins for n8n's own nodes have no properties).
		if (ours) draft.parameters = reSaved(descriptionAt(nodeTypes, draft), draft);
		const credentials = ours ? { genGatewayApi: { ...CREDENTIAL } } : node.credentials;
		return { ...draft, ...(credentials ? { credentials } : {}), ...(node.webhookId ? { webhookId: node.webhookId } : {}) };
	});

	const connections: SavedWorkflow['connections'] = {};
	for (const [from, to, how] of spec.connections) {
		const type = typeof how === 'string' ? how : 'main';
		const output = typeof how === 'number' ? how : 0;
		const outputs = ((connections[from] ??= {})[type] ??= []);
		while (outputs.length <= output) outputs.push([]);
		outputs[output].push({ node: to, type, index: 0 });
	}

	return {
		name: spec.name,
		nodes,
		pinData: {},
		connections,
		active: false,
		settings: { executionOrder: 'v1' },
		versionId: uuid(`${version}/${spec.file}/version`),
		meta: { templateCredsSetupCompleted: true },
		id: `gg${hash(`${version}/${spec.file}`).slice(0, 14)}`,
		tags: [],
	};
}
