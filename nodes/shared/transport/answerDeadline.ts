import { abortableSleep } from './wait';

/**
 * The whole-answer bound of one attempt (issue 51, 6). n8n's request `timeout` is the socket's idle time-out (axios,
 * follow-redirects): a server that sends a space every so often keeps it from ever running out. Each attempt gets an
 * AbortController of its own, aborted when `ms` pass before its answer is in (a JSON answer: whole and parsed; a
 * stream: its headers; a stream's body is bounded by its reader, idleWatch.ts). The attempt then fails as axios's own
 * time-out does, so the transport's one rule for a time-out applies: a paid request's outcome is unknown, the node's
 * Timeout is named and the request is not tried again.
 */

/** The attempt's answer was not in within its bound; read by the transport as a time-out (code and text). */
class AnswerDeadlineError extends Error {
	readonly code = 'ETIMEDOUT';

	constructor(ms: number) {
		super(`timeout of ${ms}ms exceeded: the whole answer did not arrive within it`);
		this.name = 'AnswerDeadlineError';
	}
}

/**
 * Runs one attempt with an abort controller of its own: aborted by `outer` (a stream's hang-up, at any time, also
 * after the answer began) and, until the attempt settles, by its deadline `ms` from now.
 */
async function answerWithin<T>(
	ms: number,
	outer: AbortController | undefined,
	attempt: (abort: AbortController) => Promise<T>,
): Promise<T> {
	const abort = new AbortController();
	if (outer?.signal.aborted) abort.abort();
	else outer?.signal.addEventListener('abort', () => abort.abort(), { once: true });
	const settled = new AbortController();
	let ranOut = false;
	void abortableSleep(ms, settled.signal).then(
		() => {
			ranOut = true;
			abort.abort();
		},
		() => undefined,
	);
	try {
		return await attempt(abort);
	} catch (error) {
		throw ranOut ? new AnswerDeadlineError(ms) : error;
	} finally {
		settled.abort();
	}
}

/**
 * `perform`'s attempts, each bounded by answerWithin: `arm` hands an attempt its abort controller before it is sent
 * (the transport joins it to the execution's cancel signal).
 */
export function eachAttemptWithin(ms: number, outer: AbortController | undefined, arm: (abort: AbortController) => void) {
	return <T>(perform: () => Promise<T>) =>
		async (): Promise<T> =>
			await answerWithin(ms, outer, async (abort) => {
				arm(abort);
				return await perform();
			});
}
