import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { rejectErrorAnswer } from '../shared/transport/answerError';
import { submitOnce } from '../shared/run/submissionGuard';
import { TIMEOUT_ADVICE } from '../shared/descriptions/timeoutOption';
import { gatewayJson } from '../shared/transport/transport';
import type { StreamPlan } from './stream/streamedRequest';
import { streamedRequest } from './stream/streamedRequest';

interface PaidChatRequest {
	/** `/v1/chat/completions` or `/v1/responses`. */
	path: string;
	body: IDataObject;
	itemIndex: number;
	timeoutMs: number;
	/** Set when the answer is streamed (the operation decided): how it is read. */
	stream?: StreamPlan;
}

/**
 * The paid POST of both chat operations: sent once per run of the node (a retry reuses the answer; see
 * shared/submissionGuard), streamed or not, and a 200 whose body is `{"error": ...}` is the service's error.
 */
export async function sendPaidChatRequest(ctx: IExecuteFunctions, request: PaidChatRequest): Promise<IDataObject> {
	const { path, body, itemIndex, timeoutMs, stream } = request;
	const { value } = await submitOnce(ctx, {
		itemIndex,
		what: `POST ${path}`,
		send: async () => {
			const answer =
				stream
					? await streamedRequest(ctx, { path, body, itemIndex, timeoutMs, ...stream })
					: await gatewayJson<IDataObject>(ctx, {
							method: 'POST',
							path,
							body,
							kind: 'submit',
							itemIndex,
							timeoutMs,
							timeoutAdvice: TIMEOUT_ADVICE,
						});
			await rejectErrorAnswer(ctx, answer, { method: 'POST', path, itemIndex });
			return answer;
		},
	});
	return value;
}
