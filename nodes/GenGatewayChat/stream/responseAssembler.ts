import type { IDataObject } from 'n8n-workflow';

import { errorMessageOf } from '../../shared/transport/answerError';
import { StreamEventError } from './assembler';
import type { StreamAssembler } from './assembler';

/**
 * Responses API events (`response.output_text.delta`, …, `response.completed`) → the final response object. The
 * terminal event carries the whole response; the deltas are kept so a broken stream still leaves its partial text.
 */

const TERMINAL = new Set(['response.completed', 'response.incomplete']);

export class ResponseAssembler implements StreamAssembler {
	private answer = '';

	private latest: IDataObject | undefined;

	private final: IDataObject | undefined;

	add(eventName: string, payload: IDataObject): string {
		const type = typeof payload.type === 'string' ? payload.type : eventName;
		if (type === 'error') {
			const message = typeof payload.message === 'string' ? payload.message : errorMessageOf(payload);
			throw new StreamEventError(message ?? 'The service reported an error in the stream');
		}
		const response = payload.response as IDataObject | undefined;
		if (response && typeof response === 'object') this.latest = response;
		if (type === 'response.failed') {
			throw new StreamEventError(
				(response && errorMessageOf(response)) ?? 'The service reported that the response failed',
			);
		}
		if (TERMINAL.has(type) && response) this.final = response;
		if (type === 'response.output_text.delta' && typeof payload.delta === 'string') {
			this.answer += payload.delta;
			return payload.delta;
		}
		return '';
	}

	text(): string {
		return this.answer;
	}

	finished(): boolean {
		return this.final !== undefined;
	}

	/** The terminal event's response; without one (a `[DONE]` right after the deltas), a response built from them. */
	result(): IDataObject {
		if (this.final) return this.final;
		return {
			...(this.latest ?? {}),
			object: 'response',
			status: 'completed',
			output: [
				{
					type: 'message',
					role: 'assistant',
					status: 'completed',
					content: [{ type: 'output_text', text: this.answer, annotations: [] }],
				},
			],
		};
	}
}
