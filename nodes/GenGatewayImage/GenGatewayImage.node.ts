import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { route } from '../shared/run/router';
import { modelSearch } from '../shared/descriptions/models';
import { nodeBase, operationProperty } from '../shared/descriptions/nodeBase';
import { modelLocator } from '../shared/descriptions/requestFields';
import * as generate from './actions/generate.operation';

export class GenGatewayImage implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Image',
		name: 'genGatewayImage',
		icon: {
			light: 'file:genGatewayImage.svg',
			dark: 'file:genGatewayImage.dark.svg',
		},
		group: ['transform'],
		...nodeBase(),
		subtitle: '={{"Generate an image"}}',
		description: 'Generate images with a model of the Gen Gateway service',
		defaults: { name: 'Gen Gateway Image' },
		usableAsTool: true,
		properties: [
			operationProperty(
				[
					{
						name: 'Generate',
						value: 'generate',
						action: 'Generate an image',
						description: 'Create images from a prompt (POST /v1/images/generations, paid)',
					},
				],
				'generate',
			),
			modelLocator('e.g. img-1'),
			...generate.properties,
		],
	};

	methods = { listSearch: { searchModels: modelSearch('image') } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route(this, { generate: generate.operation });
	}
}
