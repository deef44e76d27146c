import type { IDataObject } from 'n8n-workflow';

import { MAX_ANSWER_TIME, minutesText, TIMEOUT_ADVICE, totalBoundAdvice } from '../../shared/descriptions/timeoutOption';
import type { StreamAssembler } from './assembler';

/**
 * The bound on a streamed answer as a whole (issue 37, 7). Each event is bounded (shared/transport/sse.ts); the
 * assembled answer is bounded here, for the Chat node (option Max Answer Size) and the Chat Model (the default): the
 * text of every choice, refusals, tool calls' names and arguments, and the deltas of a response, counted in UTF-8
 * bytes as they arrive. Passing it stops the read. Its time is bounded too (issue 51, 6): between two pieces by the
 * Timeout, as a whole by Max Answer Time (answerTimeRanOut).
 */

/** Max Answer Size when the option is absent (saved workflows) and for the Chat Model, in MB. */
export const DEFAULT_MAX_ANSWER_MB = 32;

/** What an error keeps of the text that arrived before the bound stopped the read (`partialContent`), in characters. */
export const KEPT_PARTIAL_CHARS = 64 * 1024;

const MB = 1024 * 1024;

/** The option's value in bytes: a positive number of MB, else the default. */
export function maxAnswerBytes(mb: unknown): number {
	return (typeof mb === 'number' && Number.isFinite(mb) && mb > 0 ? mb : DEFAULT_MAX_ANSWER_MB) * MB;
}

/** The assembled answer passed the bound: the read stops. */
export class AnswerTooLargeError extends Error {
	constructor(
		readonly limitBytes: number,
		readonly optionName: string | undefined,
	) {
		super(
			`the assembled answer passed Max Answer Size (${limitBytes / MB} MB)` +
				(optionName ? '' : ', the bound on a streamed answer') +
				'; the rest was not read',
		);
		this.name = 'AnswerTooLargeError';
	}

	/** What to do, naming the option where there is one. */
	advice(): string {
		return this.optionName
			? `Raise the option "${this.optionName}" (now ${this.limitBytes / MB} MB) if an answer this long is ` +
					'expected, or ask for a shorter one (Maximum Number of Tokens); a service that never ends its stream ' +
					'sends text until the bound.'
			: `The Chat Model reads at most ${this.limitBytes / MB} MB of a streamed answer. Ask for a shorter answer ` +
					'(Maximum Number of Tokens); a service that never ends its stream sends text until the bound.';
	}
}

const bytes = (value: unknown): number => (typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0);

/** The bytes one event adds to what an assembler keeps. */
function growthOf(payload: IDataObject): number {
	let total = bytes(payload.delta);
	const choices = Array.isArray(payload.choices) ? (payload.choices as IDataObject[]) : [];
	for (const choice of choices) {
		const delta = (choice?.delta ?? {}) as IDataObject;
		total += bytes(delta.content) + bytes(delta.refusal);
		const calls = Array.isArray(delta.tool_calls) ? (delta.tool_calls as IDataObject[]) : [];
		for (const call of calls) {
			const fn = (call?.function ?? {}) as IDataObject;
			total += bytes(fn.name) + bytes(fn.arguments);
		}
	}
	return total;
}

/** `inner`, stopped with AnswerTooLargeError when what it assembled passes `limitBytes`. */
export function boundedAssembler(
	inner: StreamAssembler,
	limitBytes: number,
	optionName?: string,
): StreamAssembler {
	let size = 0;
	return {
		add: (eventName, payload) => {
			size += growthOf(payload);
			if (size > limitBytes) throw new AnswerTooLargeError(limitBytes, optionName);
			return inner.add(eventName, payload);
		},
		text: () => inner.text(),
		finished: () => inner.finished(),
		result: () => inner.result(),
	};
}

/**
 * Why a streamed answer's read was hung up on by its time bounds (issue 51, 6), and how to raise the bound: silence
 * for the Timeout, or Max Answer Time in all (a stream of keep-alive comments, or of pieces that never end).
 */
export function answerTimeRanOut(
	ranOut: 'idle' | 'total',
	bounds: { timeoutMs: number; maxAnswerMs: number },
): { reason: string; advice: string } {
	if (ranOut === 'idle') {
		return { reason: `nothing arrived for ${bounds.timeoutMs / 1000} s: the node's Timeout ran out`, advice: TIMEOUT_ADVICE };
	}
	return {
		reason: `the node's Max Answer Time ran out: the answer was not complete after ${minutesText(bounds.maxAnswerMs)} in all`,
		advice: `${totalBoundAdvice(MAX_ANSWER_TIME)} A service that keeps a stream open with keep-alive comments, or ` +
			'never ends it, is hung up on there.',
	};
}
