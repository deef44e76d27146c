import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

/** Fields the Chat and Image nodes share: the model locator and the "extra body fields" escape hatch. */

/** Model: "From list" fed by the live `GET /v1/models` (searchable), or "By ID" for anything else. */
export function modelLocator(placeholder: string): INodeProperties {
	return {
		displayName: 'Model',
		name: 'model',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required: true,
		description: 'The model to use. The list is read live from the service (GET /v1/models).',
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod: 'searchModels', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder,
			},
		],
	};
}

export function readModel(ctx: IExecuteFunctions, itemIndex: number): string {
	const model = ctx.getNodeParameter('model', itemIndex, '', { extractValue: true }) as string;
	if (typeof model !== 'string' || model.trim() === '') {
		throw new NodeOperationError(ctx.getNode(), 'No model chosen', {
			description: 'Pick a model from the list or enter its ID.',
			itemIndex,
		});
	}
	return model.trim();
}

export const extraBodyField: INodeProperties = {
	displayName: 'Extra Body Fields',
	name: 'extraBody',
	type: 'json',
	default: '{}',
	description:
		'A JSON object merged into the request body last, for any field the service accepts that this node does not name. ' +
			'Its values win over the fields above.',
};

/** The "extra body fields" parameter as an object; anything but a JSON object is a clear error. */
export function parseExtraBody(ctx: IExecuteFunctions, raw: unknown, itemIndex: number): IDataObject {
	let value = raw;
	if (value === undefined || value === null) return {};
	if (typeof value === 'string') {
		if (value.trim() === '') return {};
		try {
			value = JSON.parse(value);
		} catch (error) {
			throw new NodeOperationError(ctx.getNode(), 'Extra Body Fields is not valid JSON', {
				description: `Enter a JSON object such as {"user": "abc"}. (${(error as Error).message})`,
				itemIndex,
			});
		}
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		throw new NodeOperationError(ctx.getNode(), 'Extra Body Fields must be a JSON object', {
			description:
				'Enter a JSON object such as {"user": "abc"}; arrays and plain values cannot be merged into the body.',
			itemIndex,
		});
	}
	return value as IDataObject;
}

/**
 * The extra body fields go in last and win; a `null` value removes a field the node would send. (The Chat node reads
 * the answer as a stream when the final body says `stream: true`, so `{"stream": true}` here acts like its option.)
 */
export function mergeExtraBody(body: IDataObject, extra: IDataObject): IDataObject {
	const merged: IDataObject = { ...body };
	for (const [key, value] of Object.entries(extra)) {
		if (value === null) delete merged[key];
		else merged[key] = value;
	}
	return merged;
}
