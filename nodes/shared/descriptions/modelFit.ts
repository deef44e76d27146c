import type { IDataObject } from 'n8n-workflow';

/** The model pickers: the Chat node, the Chat Model sub-node, the Image node. */
export type ModelPicker = 'chat' | 'chatModel' | 'image';

/**
 * new-api's endpoint type names (its constant/endpoint_type.go), as `GET /v1/models` lists them per model in
 * `supported_endpoint_types`. `serves`: the endpoints the picker's node calls (Chat: /v1/chat/completions and
 * /v1/responses; Chat Model: /v1/chat/completions; Image: /v1/images/generations). `elsewhere`: kinds that mark a
 * model as made for another job; new-api lists an image model's channel endpoints too (`image-generation`, `openai`).
 */
const FIT: Record<ModelPicker, { serves: string[]; elsewhere: string[] }> = {
	chat: { serves: ['openai', 'openai-response'], elsewhere: ['image-generation', 'image-edit', 'openai-video'] },
	chatModel: { serves: ['openai'], elsewhere: ['image-generation', 'image-edit', 'openai-video'] },
	image: { serves: ['image-generation'], elsewhere: ['openai-video'] },
};

/** Kinds no picker's node can call: a model listed for these alone is left out (By ID still takes it). */
const NEVER = ['openai-video', 'embeddings', 'jina-rerank', 'openai-response-compact'];

/**
 * Where a model goes in a picker: 0 serves the node's endpoint; 1 serves it but is listed for another job too;
 * 2 says nothing (no `supported_endpoint_types`, or an empty one) or names no endpoint the node calls, as gateways
 * may still relay it (new-api names image models by their id); undefined leaves it out.
 */
export function fitRank(model: IDataObject, picker: ModelPicker): number | undefined {
	const listed = model.supported_endpoint_types;
	const types = Array.isArray(listed) ? listed.filter((t): t is string => typeof t === 'string') : [];
	if (types.length === 0) return 2;
	const { serves, elsewhere } = FIT[picker];
	if (types.some((type) => serves.includes(type))) return types.some((type) => elsewhere.includes(type)) ? 1 : 0;
	return types.every((type) => NEVER.includes(type)) ? undefined : 2;
}
