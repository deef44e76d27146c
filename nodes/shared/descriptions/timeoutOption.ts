import type { INodeProperties } from 'n8n-workflow';

/**
 * The "Timeout" option of Chat and Image: how long a paid request may wait for its whole answer (and a stream or a
 * download between two pieces). A long reasoning or a long answer can take minutes, so the default is the official OpenAI SDK's 600 s: a
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
		'Seconds to wait for the whole answer, and for a streamed answer or a download between two pieces. The request ' +
			'is paid: when the time runs out the outcome is unknown and the request is not resent.',
};

/** The option in milliseconds, the default when unset or unreadable. */
export function timeoutMsOf(seconds: unknown): number {
	const value =
		typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TIMEOUT_SECONDS;
	return Math.round(value * 1000);
}

/**
 * The total bounds (issue 51, 6). The Timeout is an idle bound on a stream and a download: a server that sends a
 * keep-alive comment or a byte every few seconds never lets it run out. So a streamed answer (Chat, Chat Model) and
 * an image download (Image) have a bound on the whole as well; absent (saved workflows), the default, far above what a
 * working answer takes, so that only a run that would never end is cut.
 */
interface TotalBound {
	/** The option as the node shows it, and its parameter name. */
	label: string;
	option: string;
	defaultMinutes: number;
	/** What it bounds, for the description. */
	what: string;
}

export const MAX_ANSWER_TIME: TotalBound = {
	label: 'Max Answer Time (Minutes)',
	option: 'maxAnswerTime',
	defaultMinutes: 60,
	what: 'a streamed answer',
};

export const MAX_DOWNLOAD_TIME: TotalBound = {
	label: 'Max Download Time (Minutes)',
	option: 'maxDownloadTime',
	defaultMinutes: 10,
	what: 'the download of an image from its URL',
};

/** The option's minimum (3 s), also what an expression's 0 or less means. */
const MIN_BOUND_MINUTES = 0.05;

/** The option of a total bound; `after` says what passing it does. */
export function totalBoundOption(bound: TotalBound, after: string): INodeProperties {
	const { label, option, defaultMinutes, what } = bound;
	return {
		displayName: label,
		name: option,
		type: 'number',
		typeOptions: { minValue: MIN_BOUND_MINUTES, numberPrecision: 2 },
		default: defaultMinutes,
		description: `The longest ${what} may take as a whole, however steadily its pieces arrive (the Timeout only ` +
			`bounds a silence between two). ${after}`,
	};
}

/** The option in milliseconds, the default when unset or unreadable. */
export function totalBoundMsOf(bound: TotalBound, minutes: unknown): number {
	// Unset or unreadable: the default. Set to 0 or less (an expression): the option's minimum, never the default,
	// which would let a run the user meant to cut short go on for minutes.
	if (typeof minutes !== 'number' || Number.isNaN(minutes)) return bound.defaultMinutes * 60_000;
	return Math.round((minutes > 0 ? minutes : MIN_BOUND_MINUTES) * 60_000);
}

/** A bound in minutes as an error says it: at most two decimals. */
export const minutesText = (ms: number): string => `${Math.round((ms / 60_000) * 100) / 100} min`;

/** Where the user raises a total bound; named in the error when it runs out. */
export const totalBoundAdvice = (bound: TotalBound): string =>
	`To let it take longer, raise the node's "${bound.label}" option (Options → ${bound.label}).`;
