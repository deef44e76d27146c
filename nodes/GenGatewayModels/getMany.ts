import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { fetchModels, filterModels } from '../shared/models';
import { asNodeError } from '../shared/errors';
import { errorItem } from '../shared/items';

export const getManyProperties: INodeProperties[] = [
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
export async function executeGetMany(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const items = this.getInputData();
	const out: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const returnAll = this.getNodeParameter('returnAll', itemIndex, true) as boolean;
			const idContains = this.getNodeParameter('idContains', itemIndex, '') as string;
			let models = filterModels(await fetchModels(this, itemIndex), idContains);
			if (!returnAll) models = models.slice(0, this.getNodeParameter('limit', itemIndex, 50) as number);
			for (const model of models) out.push({ json: model, pairedItem: { item: itemIndex } });
		} catch (error) {
			if (!this.continueOnFail()) throw asNodeError(this, error, itemIndex);
			out.push(errorItem(error, itemIndex));
		}
	}
	return out;
}
