import type { Gate } from '../run/concurrency';

/**
 * An item's way to the service, handed out by the node's router (shared/run/router.ts): which item its requests are
 * for and the node's concurrency gate they pass. The transport takes each request's pace turn and then the gate
 * (transport.ts `inLane`); nobody else touches either.
 */
export interface Lane {
	itemIndex: number;
	gate: Gate;
}
