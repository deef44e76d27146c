import { abortableSleep } from './wait';

/**
 * Calls `onIdle` once when `touch()` was not called for `idleMs`. The request's own timeout does not always cover a
 * stream once its answer has begun: follow-redirects' socket time-out does, but axios's native path (taken when n8n
 * 2.x follows redirects itself: SSRF protection with a proxy) stops timing at the response. Community nodes may not
 * use timers of their own, so it sleeps through n8n-workflow's abortable wait, one sleep at a time, re-armed when it
 * wakes up.
 */
export interface IdleWatch {
	touch(): void;
	stop(): void;
	/** True once `onIdle` was called. */
	readonly fired: boolean;
	/** Milliseconds since the last `touch()` (or the start). */
	silentMs(): number;
}

export function idleWatch(idleMs: number, onIdle: () => void): IdleWatch {
	const stopper = new AbortController();
	let last = Date.now();
	let fired = false;
	const loop = async () => {
		while (!stopper.signal.aborted) {
			const left = last + idleMs - Date.now();
			if (left <= 0) {
				fired = true;
				onIdle();
				return;
			}
			try {
				await abortableSleep(left, stopper.signal);
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
			return fired;
		},
		silentMs: () => Date.now() - last,
	};
}
