// The Video node's subtitle (the grey line under the node on the canvas) as n8n's editor computes it: its expression
// evaluated by n8n-workflow against the node's parameters. Every operation shows its display name, not its value.
import type { INode, INodePropertyOptions } from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';
import { HarnessNodeTypes } from '../harness/node-types';

const TYPE = 'n8n-nodes-gen-gateway.genGatewayVideo';
const video = new GenGatewayVideo();
const operations = video.description.properties.find((property) => property.name === 'operation')!
	.options as INodePropertyOptions[];
const defaultModel = video.description.properties.find((property) => property.name === 'model')!.default as string;

/** What the editor shows under a Video node with these parameters (n8n's getNodeSubtitle does the same call). */
function subtitle(parameters: Record<string, string>): unknown {
	const node: INode = {
		id: 'video-1',
		name: 'Video',
		type: TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters,
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: new HarnessNodeTypes([{ type: TYPE, nodeType: video }]),
	});
	return workflow.expression.getSimpleParameterValue(node, video.description.subtitle, 'internal', {});
}

describe('Video node subtitle', () => {
	it('names the model for Generate', () => {
		expect(subtitle({ operation: 'generate', model: defaultModel })).toBe(`Generate: ${defaultModel}`);
		expect(subtitle({ operation: 'generate', model: 'gk_video' })).toBe('Generate: gk_video');
	});

	// Every other operation the node offers (jest refuses an empty table, so a lost options list fails too).
	it.each(operations.filter((option) => option.value !== 'generate'))(
		'shows "$name" for the $value operation',
		({ name, value }) => {
			expect(subtitle({ operation: String(value), model: defaultModel })).toBe(name);
		},
	);
});
