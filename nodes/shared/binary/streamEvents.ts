import type { Readable } from '../transport/transport';

type Handlers = Record<string, (...args: never[]) => void>;

/**
 * Listens to `handlers` on `stream` and returns the function that stops listening to all of them: a reader that
 * settles on the first of several events (end, error, close…) removes every listener it added, whichever came.
 */
export function listen(stream: Readable, handlers: Handlers): () => void {
	const entries = Object.entries(handlers) as Array<[string, (...args: unknown[]) => void]>;
	for (const [event, handler] of entries) stream.on(event, handler);
	return () => {
		for (const [event, handler] of entries) stream.off(event, handler);
	};
}
