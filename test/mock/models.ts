/** The model list: the video matrix (imported, never copied) plus the mock's chat and image models. */
import { VIDEO_MODEL_IDS } from '../../nodes/GenGatewayVideo/model/matrix';
import type { Personality } from './types';

export const CHAT_MODELS = ['gpt-4o-mini', 'gk-chat-1'] as const;
export const IMAGE_MODELS = ['img-1', 'img-1-hd'] as const;

const CREATED = 1_700_000_000;

/**
 * new-api's endpoint type names (its constant/endpoint_type.go: `openai`, `openai-response`, `image-generation`,
 * `openai-video`, …): what `supported_endpoint_types` lists per model.
 */
const ENDPOINT_TYPES = {
	chat: ['openai'],
	image: ['image-generation'],
	video: ['openai-video'],
} as const;

/**
 * Default: `{object:'list', data:[{id, object, created, owned_by}]}`. new-api: `{success:true, data:[… +
 * supported_endpoint_types], object:'list'}` (the key order its ListModels writes).
 */
export function modelList(personality: Personality = 'default'): Record<string, unknown> {
	const groups: [readonly string[], keyof typeof ENDPOINT_TYPES][] = [
		[CHAT_MODELS, 'chat'],
		[IMAGE_MODELS, 'image'],
		[VIDEO_MODEL_IDS, 'video'],
	];
	let i = 0;
	const data = groups.flatMap(([ids, kind]) =>
		ids.map((id) => ({
			id,
			object: 'model',
			created: CREATED + i++,
			owned_by: personality === 'new-api' ? 'custom' : 'gen-gateway',
			...(personality === 'new-api' ? { supported_endpoint_types: [...ENDPOINT_TYPES[kind]] } : {}),
		})),
	);
	return personality === 'new-api' ? { success: true, data, object: 'list' } : { object: 'list', data };
}

export const isChatModel = (id: string): boolean => (CHAT_MODELS as readonly string[]).includes(id);
export const isImageModel = (id: string): boolean => (IMAGE_MODELS as readonly string[]).includes(id);
export const isVideoModel = (id: string): boolean => (VIDEO_MODEL_IDS as readonly string[]).includes(id);
