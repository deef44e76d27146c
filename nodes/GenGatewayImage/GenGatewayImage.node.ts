import { NodeConnectionTypes } from 'n8n-workflow';
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

import { withMessageForChat } from '../shared/chatStreaming';
import { asNodeError } from '../shared/errors';
import { errorItem } from '../shared/items';
import { searchModels } from '../shared/models';
import { releaseSubmissions } from '../shared/submissionGuard';
import { modelLocator } from '../shared/requestFields';
import { generate, generateProperties } from './generate';
import { IMAGE_URLS } from './imageOutput';

export class GenGatewayImage implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Image',
		name: 'genGatewayImage',
		icon: { light: 'file:genGatewayImage.svg', dark: 'file:genGatewayImage.dark.svg' },
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
			...generateProperties,
		],
	};

	methods = { listSearch: { searchModels } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const out: INodeExecutionData[] = [];
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				out.push(...(await generate(this, itemIndex)));
			} catch (error) {
				if (!this.continueOnFail()) throw withMessageForChat(this, asNodeError(this, error, itemIndex));
				const urls = (error as { context?: IDataObject }).context?.[IMAGE_URLS];
				out.push(errorItem(error, itemIndex, urls === undefined ? {} : { [IMAGE_URLS]: urls }));
			}
		}
		releaseSubmissions(this, out);
		return [out];
	}
}
