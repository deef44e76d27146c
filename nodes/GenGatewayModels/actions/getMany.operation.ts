import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { fetchModels, filterModels } from '../../shared/descriptions/models';
import { asNodeError } from '../../shared/transport/errors';
import { runItems } from '../../shared/run/runItems';

export const properties: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: true,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
	{
		displayName: 'Filter by ID',
		name: 'idContains',
		type: 'string',
		default: '',
		placeholder: 'e.g. sd_2.0',
		description: 'Only models whose ID contains this text (case-insensitive)',
	},
];

/** One output item per model, for each input item (usually one). */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await runItems(
		this,
		async (itemIndex) => {
			const returnAll = this.getNodeParameter('returnAll', itemIndex, true) as boolean;
			const idContains = this.getNodeParameter('idContains', itemIndex, '') as string;
			let models = filterModels(await fetchModels(this, itemIndex), idContains);
			if (!returnAll) models = models.slice(0, this.getNodeParameter('limit', itemIndex, 50) as number);
			return models.map((model) => ({
				json: model,
				pairedItem: { item: itemIndex },
			}));
		},
		{ failure: (error, itemIndex) => asNodeError(this, error, itemIndex) },
	);
}
