import type { IDataObject, IExecuteFunctions, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { imageFields, imagesOf } from './messageImages';
import type { ImageFields, ImageRef } from './messageImages';

/**
 * The list of role + content messages both chat operations take (a user message may carry images); only the roles
 * and the labels differ.
 */

export interface MessageEntry extends ImageFields {
	role?: string;
	content?: string;
}

/** The free text sent before the list (the system message, or the instructions). */
export function leadTextProperty(
	operation: string,
	name: string,
	displayName: string,
	text: { placeholder: string; description: string },
): INodeProperties {
	return {
		displayName,
		name,
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		...text,
		displayOptions: { show: { operation: [operation] } },
	};
}

export function messageListProperty(options: {
	name: string;
	displayName: string;
	placeholder: string;
	description?: string;
	roles: INodePropertyOptions[];
	operation: string;
}): INodeProperties {
	return {
		displayName: options.displayName,
		name: options.name,
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: options.placeholder,
		default: { values: [{ role: 'user', content: '' }] },
		...(options.description ? { description: options.description } : {}),
		displayOptions: { show: { operation: [options.operation] } },
		options: [
			{
				displayName: 'Message',
				name: 'values',
				values: [
					{
						displayName: 'Role',
						name: 'role',
						type: 'options',
						default: 'user',
						options: options.roles,
					},
					{
						displayName: 'Content',
						name: 'content',
						type: 'string',
						typeOptions: { rows: 2 },
						default: '',
						placeholder: 'e.g. Hello, how can you help me?',
					},
					...imageFields,
				],
			},
		],
	};
}

export const USER_ROLE: INodePropertyOptions = { name: 'User', value: 'user', description: 'What the user says' };
export const ASSISTANT_ROLE: INodePropertyOptions = {
	name: 'Assistant',
	value: 'assistant',
	description: 'An earlier answer of the model',
};

/** The endpoint a message list is sent to: POST /v1/chat/completions or POST /v1/responses. */
export type Endpoint = 'chatCompletions' | 'responses';

/** The content parts of a message with images, in each endpoint's OpenAI-format shape. */
type Parts = { text: (text: string) => IDataObject; image: (image: ImageRef) => IDataObject };
const PARTS: Record<Endpoint, Parts> = {
	chatCompletions: {
		text: (text: string) => ({ type: 'text', text }),
		image: ({ url, detail }: ImageRef) => ({
			type: 'image_url',
			image_url: detail === 'auto' ? { url } : { url, detail },
		}),
	},
	responses: {
		text: (text: string) => ({ type: 'input_text', text }),
		image: ({ url, detail }: ImageRef) => ({
			type: 'input_image',
			image_url: url,
			detail,
		}),
	},
};

/**
 * Entries as the service takes them: a missing role is the user's, missing content is empty. A message with images
 * has a list of parts (its text first, when any) instead of a string. `list` names the list for errors.
 */
export async function messagesOf(
	ctx: IExecuteFunctions,
	entries: MessageEntry[],
	options: { endpoint: Endpoint; itemIndex: number; list: string },
): Promise<IDataObject[]> {
	const parts = PARTS[options.endpoint];
	const messages: IDataObject[] = [];
	for (const [index, entry] of entries.entries()) {
		const role = entry.role ?? 'user';
		const text = entry.content ?? '';
		const images = await imagesOf(ctx, entry, options.itemIndex, `${options.list} › Message ${index + 1}`);
		if (images.length === 0) {
			messages.push({ role, content: text });
			continue;
		}
		const content: IDataObject[] = text === '' ? [] : [parts.text(text)];
		messages.push({ role, content: [...content, ...images.map(parts.image)] });
	}
	return messages;
}
