/** The model list: the video matrix (imported, never copied) plus the mock's chat and image models. */
import { VIDEO_MODEL_IDS } from '../../nodes/GenGatewayVideo/model/matrix';

export const CHAT_MODELS = ['gpt-4o-mini', 'gk-chat-1'] as const;
export const IMAGE_MODELS = ['img-1', 'img-1-hd'] as const;

const CREATED = 1_700_000_000;

export function modelList(): { object: 'list'; data: Record<string, unknown>[] } {
	const entry = (id: string, i: number) => ({ id, object: 'model', created: CREATED + i, owned_by: 'gen-gateway' });
	return {
		object: 'list',
		data: [...CHAT_MODELS, ...IMAGE_MODELS, ...VIDEO_MODEL_IDS].map(entry),
	};
}

export const isChatModel = (id: string): boolean => (CHAT_MODELS as readonly string[]).includes(id);
export const isImageModel = (id: string): boolean => (IMAGE_MODELS as readonly string[]).includes(id);
