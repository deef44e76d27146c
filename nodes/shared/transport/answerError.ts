import { NodeApiError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { OUTCOME_UNKNOWN, redact } from './errors';
import { credentialSecrets } from './transport';

/**
 * Some OpenAI-format services answer an error with HTTP 200 and a body `{"error": {"message": ...}}` (or put it in
 * a stream). That is the service's error, never an empty success: this module finds it and says it.
 */

/** The service's error in a payload (`{"error": {...}}` or `{"error": "..."}`); undefined when there is none. */
export function errorMessageOf(payload: IDataObject): string | undefined {
	const error = payload.error;
	if (typeof error === 'string' && error !== '') return error;
	if (!error || typeof error !== 'object' || Array.isArray(error)) return undefined;
	const { message, code, type } = error as IDataObject;
	if (typeof message === 'string' && message !== '') return message;
	const name = [code, type].find((value) => typeof value === 'string' && value !== '');
	return name ? `The service reported an error (${name as string})` : 'The service reported an error';
}

/**
 * Throws the service's error when a 2xx answer is one. The service said no: not an unknown outcome (a retry of the
 * node may send the request again, as after a 4xx).
 */
export async function rejectErrorAnswer(
	ctx: IExecuteFunctions,
	answer: IDataObject,
	where: { method: string; path: string; itemIndex: number },
): Promise<void> {
	const found = errorMessageOf(answer);
	if (found === undefined) return;
	const safe = redact(found, await credentialSecrets(ctx));
	const message = `${where.method} ${where.path} failed: ${safe}`;
	const error = new NodeApiError(
		ctx.getNode(),
		{ message: safe },
		{
			message,
			description:
				'The service answered with an error instead of a result (HTTP 200 with an "error" body). Correct the request as ' +
					'the message says, or try again later.',
			itemIndex: where.itemIndex,
		},
	);
	// NodeApiError may swap a message naming a common error code for generic text; the service's words stay.
	error.message = message;
	error.context[OUTCOME_UNKNOWN] = false;
	throw error;
}
