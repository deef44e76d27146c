import { NodeApiError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { OUTCOME_UNKNOWN } from './errors';

/**
 * The errors of a streamed answer after its 200, for the Chat node and the Chat Model alike: once the service began
 * to answer, the generation ran and may be billed, so each one marks the call as paid (outcome unknown: the submission
 * guard never sends it again) and keeps the text that arrived in `partialContent`.
 */

/** Where an error keeps the text that arrived before a stream broke. */
export const PARTIAL_CONTENT = 'partialContent';

/** Which call broke, and where the caller keeps what arrived (a sentence, or nothing when it is not shown). */
export interface BrokenCall {
	path: string;
	itemIndex?: number;
	/** e.g. 'The text received so far is kept in the error item ("partialContent") when the node continues on fail.' */
	keptNote?: string;
}

const CONNECTION_ADVICE = 'Check the network and any proxy that may cut long-lived connections before running it again.';

/**
 * NodeApiError swaps a message naming a common error code (ECONNRESET…) for generic text: ours says more, so it is
 * set back.
 */
function paid(error: NodeApiError, message: string, partial: string): NodeApiError {
	error.message = message;
	error.context[PARTIAL_CONTENT] = partial;
	error.context[OUTCOME_UNKNOWN] = true;
	return error;
}

const sentences = (...parts: Array<string | undefined>) => parts.filter(Boolean).join(' ');

export function brokenStreamError(
	node: INode,
	call: BrokenCall,
	partial: string,
	reason: string,
	advice = CONNECTION_ADVICE,
): NodeApiError {
	const message = `The stream of POST ${call.path} broke before it was complete (${reason}): the output is ` +
		`incomplete, ${partial.length} characters arrived. The upstream generation may not have been cancelled (it may ` +
		`still run and be charged), so the request was not resent.`;
	const description = sentences(
		'A broken stream does not prove that the service stopped working on the request.',
		call.keptNote,
		advice,
	);
	const error = new NodeApiError(node, { message, code: 'STREAM_BROKEN' }, { message, description, itemIndex: call.itemIndex });
	return paid(error, message, partial);
}

/** An error the service reported inside the stream (`event: error`, `data: {"error": …}`); `said` is redacted. */
export function serviceStreamError(node: INode, call: BrokenCall, partial: string, said: string): NodeApiError {
	const message = `POST ${call.path} failed while streaming: ${said}`;
	const description = sentences(
		`The service reported an error after it had begun to answer; the output is incomplete (${partial.length} ` +
			'characters arrived).',
		call.keptNote,
		'The generation ran and may be charged, so the call counts as paid and was not resent (Retry On Fail does not ' +
			'send it again either).',
	);
	const error = new NodeApiError(
		node,
		{ message: said, code: 'STREAM_ERROR' },
		{ message, description, itemIndex: call.itemIndex },
	);
	return paid(error, message, partial);
}

/** A 200 whose body holds no answer at all (no choice): the service took the request, so it is not resent. */
export function emptyAnswerError(node: INode, path: string): NodeApiError {
	const message = `POST ${path} answered 200 without any choice: there is no answer to use`;
	const error = new NodeApiError(
		node,
		{ message, code: 'NO_CHOICE' },
		{
			message,
			description: "The service accepted the request but returned no answer; check the model and the credential's " +
				'base URL. The call may have been charged, so it was not resent.',
		},
	);
	return paid(error, message, '');
}
