import type { INodeProperties } from 'n8n-workflow';

/**
 * The "Timeout" option of Chat and Image: how long a paid request may wait for its answer (and a stream between two
 * pieces). A long reasoning or a long answer can take minutes, so the default is the official OpenAI SDK's 600 s: a
 * shorter one fails requests that the service still finishes and bills (an unknown outcome, never resent).
 */

export const DEFAULT_TIMEOUT_SECONDS = 600;

/** Where the user raises it; named in the error when it runs out. */
export const TIMEOUT_ADVICE = 'To wait longer, raise the node\'s "Timeout" option (Options → Timeout, in seconds).';

export const timeoutOption: INodeProperties = {
	displayName: 'Timeout',
	name: 'timeout',
	type: 'number',
	typeOptions: { minValue: 1 },
	default: DEFAULT_TIMEOUT_SECONDS,
	description:
		'Seconds to wait for the answer to start, and for a streamed answer between two pieces. The request is paid: when ' +
			'the time runs out the outcome is unknown and the request is not resent.',
};

/** The option in milliseconds, the default when unset or unreadable. */
export function timeoutMsOf(seconds: unknown): number {
	const value =
		typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TIMEOUT_SECONDS;
	return Math.round(value * 1000);
}
