import type { IDataObject } from 'n8n-workflow';

import { redact } from '../../shared/transport/errors';
import { redactDeep } from '../../shared/transport/redaction';

/** What the streaming reader needs from the code that understands one endpoint's events. */
export interface StreamAssembler {
	/** Takes one parsed event; returns the text it adds to the answer ('' when none). Throws for an error event. */
	add(eventName: string, payload: IDataObject): string;
	/** The answer text received so far (kept when the stream breaks). */
	text(): string;
	/** True when the events alone prove the answer is whole (a terminal event), even without `[DONE]`. */
	finished(): boolean;
	/** The whole answer in the shape the endpoint returns without streaming. */
	result(): IDataObject;
}

/** An error the service reported inside the stream (not a broken connection). */
export class StreamEventError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'StreamEventError';
	}
}

/**
 * The same assembler, its text masked where it is read: the text so far (`partialContent`, the Chat Model's error) and
 * the whole answer (`content`, tool-call arguments). Events are redacted one by one before they arrive here, but a key
 * split across two deltas is whole only in the assembled text, so that is masked too.
 */
export function redactedAssembler(inner: StreamAssembler, secrets: readonly string[]): StreamAssembler {
	return {
		add: (eventName, payload) => inner.add(eventName, payload),
		text: () => redact(inner.text(), secrets),
		finished: () => inner.finished(),
		result: () => redactDeep(inner.result(), secrets),
	};
}
