import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { route } from '../shared/run/router';
import { modelSearch } from '../shared/descriptions/models';
import { nodeBase, operationProperty } from '../shared/descriptions/nodeBase';
import { modelLocator } from '../shared/descriptions/requestFields';
import * as message from './actions/message.operation';
import * as response from './actions/response.operation';
import { optionsProperty } from './options';
import { simplifyProperty } from './output';

const OPERATIONS = { message: message.operation, response: response.operation };

export class GenGatewayChat implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Chat',
		name: 'genGatewayChat',
		icon: {
			light: 'file:genGatewayChat.svg',
			dark: 'file:genGatewayChat.dark.svg',
		},
		group: ['transform'],
		...nodeBase(),
		subtitle: '={{$parameter["operation"] === "response" ? "Create a response" : "Message a model"}}',
		description: 'Talk to a text model of the Gen Gateway service (chat completions or responses)',
		defaults: { name: 'Gen Gateway Chat' },
		usableAsTool: true,
		properties: [
			operationProperty(
				[
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
				'message',
			),
			modelLocator('e.g. gpt-4o-mini'),
			...message.properties,
			...response.properties,
			simplifyProperty,
			optionsProperty,
		],
	};

	methods = { listSearch: { searchModels: modelSearch('chat') } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		// Each item names its own operation (both share the run's policy).
		return await route(this, OPERATIONS, { operationPerItem: true });
	}
}
