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
import { createResponse, createResponseProperties } from './createResponse';
import { messageModel, messageModelProperties } from './messageModel';
import { optionsProperty } from './options';
import { simplifyProperty } from './output';
import { PARTIAL_CONTENT } from './streaming';

const OPERATIONS: Record<string, (ctx: IExecuteFunctions, itemIndex: number) => Promise<IDataObject>> = {
	message: messageModel,
	response: createResponse,
};

export class GenGatewayChat implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Chat',
		name: 'genGatewayChat',
		icon: { light: 'file:genGatewayChat.svg', dark: 'file:genGatewayChat.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{$parameter["operation"] === "response" ? "Create a response" : "Message a model"}}',
		description: 'Talk to a text model of the Gen Gateway service (chat completions or responses)',
		defaults: { name: 'Gen Gateway Chat' },
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
						name: 'Message a Model',
						value: 'message',
						action: 'Message a model',
						description: 'Send a conversation and get the next message (POST /v1/chat/completions)',
					},
					{
						name: 'Create a Response',
						value: 'response',
						action: 'Create a response',
						description: 'Send instructions and input and get a response (POST /v1/responses)',
					},
				],
				default: 'message',
			},
			modelLocator('e.g. gpt-4o-mini'),
			...messageModelProperties,
			...createResponseProperties,
			simplifyProperty,
			optionsProperty,
		],
	};

	methods = { listSearch: { searchModels } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const out: INodeExecutionData[] = [];
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				const operation = this.getNodeParameter('operation', itemIndex) as string;
				const json = await OPERATIONS[operation](this, itemIndex);
				out.push({ json, pairedItem: { item: itemIndex } });
			} catch (error) {
				if (!this.continueOnFail()) throw withMessageForChat(this, asNodeError(this, error, itemIndex));
				const partial = (error as { context?: IDataObject }).context?.[PARTIAL_CONTENT];
				out.push(errorItem(error, itemIndex, partial === undefined ? {} : { [PARTIAL_CONTENT]: partial }));
			}
		}
		releaseSubmissions(this, out);
		return [out];
	}
}
