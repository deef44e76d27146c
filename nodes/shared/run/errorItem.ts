import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

/** The item a node emits for a failed input item under "Continue On Fail": the error's message and description. */
export function errorItem(error: unknown, itemIndex: number, extra: IDataObject = {}): INodeExecutionData {
	const { message, description, httpCode } = error as { message?: string; description?: string; httpCode?: string };
	const json: IDataObject = { error: message ?? String(error), ...extra };
	if (description) json.errorDescription = description;
	if (httpCode) json.httpCode = httpCode;
	return { json, pairedItem: { item: itemIndex } };
}
