import type { IDataObject, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

/** The list of role + content messages both chat operations take; only the roles and the labels differ. */

export interface MessageEntry {
	role?: string;
	content?: string;
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

/** Entries as the service takes them: a missing role is the user's, missing content is empty. */
export function messagesOf(entries: MessageEntry[]): IDataObject[] {
	return entries.map((entry) => ({ role: entry.role ?? 'user', content: entry.content ?? '' }));
}
