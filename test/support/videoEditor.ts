import { NodeHelpers } from 'n8n-workflow';
import type { INode, INodeParameters, INodeProperties } from 'n8n-workflow';

import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';

/**
 * What the editor shows of the Video node for some values, computed with n8n-workflow's own display logic (the code
 * the editor and the engine use).
 */
export const videoDescription = new GenGatewayVideo().description;

const node: INode = {
	id: 'video',
	name: 'Gen Gateway Video',
	type: 'n8n-nodes-gen-gateway.genGatewayVideo',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** The parameters n8n resolves for a node with these values set, and the properties it displays. */
export function displayed(values: INodeParameters): { parameters: INodeParameters; properties: INodeProperties[] } {
	const description = videoDescription;
	const parameters = NodeHelpers.getNodeParameters(description.properties, values, true, false, node, description)!;
	const properties = description.properties.filter((property) =>
		NodeHelpers.displayParameter(parameters, property, node, description),
	);
	return { parameters, properties };
}
