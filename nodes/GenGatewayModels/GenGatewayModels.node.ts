import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { nodeBase, operationProperty } from '../shared/descriptions/nodeBase';
import { route } from '../shared/run/router';
import * as getMany from './actions/getMany.operation';

export class GenGatewayModels implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Models',
		name: 'genGatewayModels',
		icon: { light: 'file:genGatewayModels.svg', dark: 'file:genGatewayModels.dark.svg' },
		group: ['transform'],
		...nodeBase(),
		subtitle: '={{"Get many models"}}',
		description: 'List the models the Gen Gateway service offers right now',
		defaults: { name: 'Gen Gateway Models' },
		usableAsTool: true,
		properties: [
			operationProperty(
				[
					{
						name: 'Get Many',
						value: 'getMany',
						action: 'Get many models',
						description: 'List the live models (GET /v1/models, free of charge)',
					},
				],
				'getMany',
			),
			...getMany.properties,
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route(this, { getMany: getMany.operation });
	}
}
