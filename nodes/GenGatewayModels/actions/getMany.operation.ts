import type { INodeProperties } from 'n8n-workflow';

import { fetchModels, filterModels } from '../../shared/descriptions/models';
import { asNodeError } from '../../shared/transport/errors';
import type { Operation } from '../../shared/run/router';

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
export const operation: Operation = {
	properties,
	policy: (ctx) => ({ failure: (error, itemIndex) => asNodeError(ctx, error, itemIndex) }),
	run: async (ctx, itemIndex) => {
		const returnAll = ctx.getNodeParameter('returnAll', itemIndex, true) as boolean;
		const idContains = ctx.getNodeParameter('idContains', itemIndex, '') as string;
		let models = filterModels(await fetchModels(ctx, itemIndex), idContains);
		if (!returnAll) models = models.slice(0, ctx.getNodeParameter('limit', itemIndex, 50) as number);
		return models.map((model) => ({
			json: model,
			pairedItem: { item: itemIndex },
		}));
	},
};
