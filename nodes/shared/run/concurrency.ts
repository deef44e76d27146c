/**
 * A gate that lets at most `limit` calls run at once; the rest queue in arrival order. Items of a batch all proceed
 * together and pass through the gate only for their requests, so 20 tasks of T seconds finish in about T (their
 * waits overlap) while the service never sees more than `limit` requests from one node at a time.
 */
export type Gate = <T>(call: () => Promise<T>) => Promise<T>;

export function createGate(limit: number): Gate {
	const capacity = Math.max(1, Math.floor(limit) || 1);
	let running = 0;
	const queue: Array<() => void> = [];
	const release = () => {
		running--;
		queue.shift()?.();
	};
	return async <T>(call: () => Promise<T>): Promise<T> => {
		if (running >= capacity) await new Promise<void>((resolve) => queue.push(resolve));
		running++;
		try {
			return await call();
		} finally {
			release();
		}
	};
}
