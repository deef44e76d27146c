import { abortableSleep } from './wait';

/**
 * Calls `onIdle` once when `touch()` was not called for `idleMs`, or (issue 51, 6) when `totalMs` passed since the
 * start however often it was touched: a server that sends a keep-alive comment or one byte every few seconds keeps an
 * idle bound from ever running out, so a stream and a download have a total bound as well. The request's own timeout
 * does not always cover a stream once its answer has begun: follow-redirects' socket time-out does, but axios's native
 * path (taken when n8n 2.x follows redirects itself: SSRF protection with a proxy) stops timing at the response.
 * Community nodes may not use timers of their own, so it sleeps through n8n-workflow's abortable wait, one sleep at a
 * time, re-armed when it wakes up.
 */
export interface IdleWatch {
	touch(): void;
	stop(): void;
	/** True once `onIdle` was called. */
	readonly fired: boolean;
	/** Which bound made it fire: silence for `idleMs`, or `totalMs` in all. */
	readonly ranOut: 'idle' | 'total' | undefined;
	/** Milliseconds since the last `touch()` (or the start). */
	silentMs(): number;
}

export function idleWatch(idleMs: number, onIdle: () => void, totalMs = Number.POSITIVE_INFINITY): IdleWatch {
	const stopper = new AbortController();
	const start = Date.now();
	let last = start;
	let ranOut: IdleWatch['ranOut'];
	const loop = async () => {
		while (!stopper.signal.aborted) {
			const now = Date.now();
			const idleLeft = last + idleMs - now;
			const totalLeft = start + totalMs - now;
			if (totalLeft <= 0 || idleLeft <= 0) {
				ranOut = totalLeft <= 0 ? 'total' : 'idle';
				onIdle();
				return;
			}
			try {
				await abortableSleep(Math.min(idleLeft, totalLeft), stopper.signal);
			} catch {
				return; // stopped
			}
		}
	};
	void loop();
	return {
		touch: () => {
			last = Date.now();
		},
		stop: () => stopper.abort(),
		get fired() {
			return ranOut !== undefined;
		},
		get ranOut() {
			return ranOut;
		},
		silentMs: () => Date.now() - last,
	};
}

/**
 * Which bound ended a read that failed or ended early: the watch's own, or silence as long as the idle bound (the
 * socket's idle time-out, of the same length, may destroy the stream a moment before the watch wakes up).
 */
export function boundRanOut(watch: IdleWatch | undefined, idleMs: number): IdleWatch['ranOut'] {
	if (!watch) return undefined;
	return watch.ranOut ?? (watch.silentMs() >= idleMs - 250 ? 'idle' : undefined);
}
