import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { chatRunPolicy, runItems } from '../shared/run/runItems';
import { searchModels } from '../shared/descriptions/models';
import { modelLocator } from '../shared/descriptions/requestFields';
import * as generate from './actions/generate.operation';
import { IMAGE_URLS } from './imageOutput';

export class GenGatewayImage implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Image',
		name: 'genGatewayImage',
		icon: {
			light: 'file:genGatewayImage.svg',
			dark: 'file:genGatewayImage.dark.svg',
		},
		group: ['transform'],
		version: 1,
		subtitle: '={{"Generate an image"}}',
		description: 'Generate images with a model of the Gen Gateway service',
		defaults: { name: 'Gen Gateway Image' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'genGatewayApi', required: true }],
		properties: [
			{
				displayName: 'Operation',
				name: 'operation',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Generate',
						value: 'generate',
						action: 'Generate an image',
						description: 'Create images from a prompt (POST /v1/images/generations, paid)',
					},
				],
				default: 'generate',
			},
			modelLocator('e.g. img-1'),
			...generate.properties,
		],
	};

	methods = { listSearch: { searchModels } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [
			await runItems(
				this,
				async (itemIndex) => await generate.execute(this, itemIndex),
				chatRunPolicy(this, [IMAGE_URLS]),
			),
		];
	}
}
