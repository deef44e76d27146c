/**
 * Server-sent events for streamed text answers; honours the 'sse-cut' fault (a few events, then a dropped socket).
 * In the new-api personality, `X-Accel-Buffering: no` and a `: PING` keep-alive comment between frames, as new-api
 * writes them while it relays a stream.
 */
import { setTimeout as wait } from 'timers/promises';
import { cut, note, type RequestContext } from './context';

export interface SseEvent {
	/** `event:` line (Responses API); omitted for chat completions. */
	event?: string;
	data: unknown;
}

/** new-api's keep-alive comment. */
export const PING = ': PING\n\n';

/** Events sent before an 'sse-cut' drops the connection. */
const EVENTS_BEFORE_CUT = 3;

const write = (ctx: RequestContext, text: string) =>
	new Promise<void>((resolve) => ctx.res.write(text, () => resolve()));

export async function sendSse(ctx: RequestContext, events: SseEvent[]): Promise<void> {
	if (ctx.fault?.kind === 'cut-after-accept') return cut(ctx, 'handled-then-cut');
	const newApi = ctx.personality === 'new-api';
	ctx.res.writeHead(200, {
		'Content-Type': 'text/event-stream; charset=utf-8',
		'Cache-Control': 'no-cache',
		Connection: 'keep-alive',
		...(newApi ? { 'X-Accel-Buffering': 'no' } : {}),
	});
	let sent = 0;
	for (const { event, data } of events) {
		if (ctx.res.destroyed) return note(ctx, 'client-aborted');
		if (ctx.fault && sent >= EVENTS_BEFORE_CUT) return cut(ctx, 'sse-cut');
		// A comment line between frames: after the first frame, then after every second one.
		if (newApi && sent % 2 === 1) await write(ctx, PING);
		await write(ctx, `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
		sent++;
		// A small gap so clients really receive the stream in pieces.
		await wait(2);
	}
	if (ctx.fault) return cut(ctx, 'sse-cut');
	ctx.res.end('data: [DONE]\n\n');
}
