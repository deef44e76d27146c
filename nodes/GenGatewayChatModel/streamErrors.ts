import { NodeApiError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { OUTCOME_UNKNOWN } from '../shared/transport/errors';

/**
 * The errors of a streamed chat completion after its 200, in the Chat node's words (GenGatewayChat/stream/
 * streamedRequest.ts): once the service began to answer, the generation ran and may be billed, so each one marks the
 * call as paid (outcome unknown) and nothing sends it again. The text that arrived is kept in `partialContent`.
 */

const PARTIAL_CONTENT = 'partialContent';

function paid(error: NodeApiError, message: string, partial: string): NodeApiError {
	// NodeApiError swaps a message naming a common error code (ECONNRESET…) for generic text: ours says more.
	error.message = message;
	error.context[PARTIAL_CONTENT] = partial;
	error.context[OUTCOME_UNKNOWN] = true;
	return error;
}

export function brokenStreamError(
	node: INode,
	path: string,
	partial: string,
	reason: string,
	advice = 'Check the network and any proxy that may cut long-lived connections before running it again.',
): NodeApiError {
	const message = `The stream of POST ${path} broke before it was complete (${reason}): the output is ` +
		`incomplete, ${partial.length} characters arrived. The upstream generation may not have been cancelled (it may ` +
		`still run and be charged), so the request was not resent.`;
	const description = `A broken stream does not prove that the service stopped working on the request. ${advice}`;
	const error = new NodeApiError(node, { message, code: 'STREAM_BROKEN' }, { message, description });
	return paid(error, message, partial);
}

/** An error the service reported inside the stream (`event: error`, `data: {"error": …}`); `said` is redacted. */
export function serviceStreamError(node: INode, path: string, partial: string, said: string): NodeApiError {
	const message = `POST ${path} failed while streaming: ${said}`;
	const error = new NodeApiError(
		node,
		{ message: said, code: 'STREAM_ERROR' },
		{
			message,
			description: `The service reported an error after it had begun to answer; the output is incomplete ` +
				`(${partial.length} characters arrived). The generation ran and may be charged, so the call counts as ` +
				`paid and was not resent (Retry On Fail does not send it again either).`,
		},
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
