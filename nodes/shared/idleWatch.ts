import { abortableSleep } from './wait';

/**
 * Calls `onIdle` once when `touch()` was not called for `idleMs`. A stream that goes silent is otherwise waited on for
 * ever: axios's timeout stops once the answer has begun (n8n 2.x). Community nodes may not use setTimeout, so it
 * sleeps through n8n-workflow's abortable wait, one sleep at a time, re-armed only when it wakes up.
 */
export interface IdleWatch {
	touch(): void;
	stop(): void;
	/** True once `onIdle` was called. */
	readonly fired: boolean;
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
	};
}
