import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { gatewayJson } from '../transport/transport';
import type { GatewayFunctions } from '../transport/transport';
import { fitRank } from './modelFit';
import type { ModelPicker } from './modelFit';

/** One entry of `GET /v1/models`, as the service returned it (extra fields kept). */
type ModelEntry = IDataObject & { id: string };

/** Accepts `{data: [...]}` (OpenAI style), `{models: [...]}` or a bare array; entries without an id are dropped. */
function modelsFromBody(body: unknown): ModelEntry[] {
	const record = body as Record<string, unknown> | undefined;
	const list = Array.isArray(body) ? body : (record?.data ?? record?.models);
	if (!Array.isArray(list)) return [];
	return list
		.map((entry): ModelEntry | undefined => {
			if (typeof entry === 'string') return { id: entry };
			if (entry && typeof entry === 'object' && typeof (entry as IDataObject).id === 'string') {
				return entry as ModelEntry;
			}
			return undefined;
		})
		.filter((entry): entry is ModelEntry => entry !== undefined);
}

/** The live model list; it takes precedence over anything static (docs/service-interface.md §1). */
export async function fetchModels(ctx: GatewayFunctions, itemIndex?: number): Promise<ModelEntry[]> {
	const body = await gatewayJson(ctx, { method: 'GET', path: '/v1/models', kind: 'read', itemIndex });
	return modelsFromBody(body);
}

export function filterModels(models: ModelEntry[], filter: string | undefined): ModelEntry[] {
	const needle = (filter ?? '').trim().toLowerCase();
	if (!needle) return models;
	return models.filter((model) => model.id.toLowerCase().includes(needle));
}

/**
 * Resource locator "From list" of a picker: searchable, fed by the live list. Where the service says which endpoints a
 * model serves, the models that fit the node come first and those made only for what no node here calls are left
 * out (modelFit.ts); otherwise, or among equals, by name.
 */
export function modelSearch(picker: ModelPicker) {
	return async function searchModels(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
		const ranked = filterModels(await fetchModels(this), filter)
			.map((model) => ({ id: model.id, rank: fitRank(model, picker) }))
			.filter((model): model is { id: string; rank: number } => model.rank !== undefined)
			.sort((a, b) => a.rank - b.rank || a.id.localeCompare(b.id));
		return { results: ranked.map((model) => ({ name: model.id, value: model.id })) };
	};
}
