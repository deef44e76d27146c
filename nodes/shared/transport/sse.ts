/**
 * Server-sent events (docs/service-interface.md §6): a pure, incremental parser. Bytes go in as they arrive, whole
 * events come out; an event split across chunks (even inside a UTF-8 character or between CR and LF) waits for its
 * missing part.
 * The stream ends at `data: [DONE]`, as soon as that line arrives (some services never send the blank line after
 * it and keep the connection open); anything after it is ignored.
 * One event holds at most MAX_EVENT_CHARS: a line or an event that grows past it is an error, not a bigger buffer.
 */

export interface SseEvent {
	/** The `event:` name; 'message' when the event had none. */
	event: string;
	/** The `data:` lines of the event, joined with '\n'. */
	data: string;
	/** The last `id:` seen, if any. */
	id?: string;
}

const DONE_MARKER = '[DONE]';

/**
 * The most text one event may hold (its data lines and the line still being read), 8 Mi characters: 8 MiB of the
 * ASCII JSON services send (16 MiB as a string of other text). A chat chunk is a few hundred bytes; the largest
 * event a service sends is a Responses terminal event, which repeats the whole answer: 128k output tokens are about
 * 0.5 MB of text, a generated image in base64 3–5 MB. Past the limit the event is a broken or hostile server's.
 */
export const MAX_EVENT_CHARS = 8 * 1024 * 1024;

/** An event (or one line) grew past MAX_EVENT_CHARS before it ended. */
export class SseEventTooLargeError extends Error {
	constructor(readonly limit: number) {
		super(`an event grew past ${limit / (1024 * 1024)} MiB without ending`);
		this.name = 'SseEventTooLargeError';
	}
}

export class SseParser {
	/** True once `data: [DONE]` arrived: the stream is complete. */
	done = false;

	private readonly decoder = new TextDecoder('utf-8');

	/** Text of the current line that has not met its line end yet. */
	private partialLine = '';

	/** The previous chunk ended with CR: a LF at the start of the next one belongs to the same line end. */
	private afterCR = false;

	private dataLines: string[] = [];

	private eventName = '';

	private lastId: string | undefined;

	private startOfStream = true;

	/** Characters in `dataLines` (and the newlines that join them). */
	private eventChars = 0;

	/** Set once an event grew past the limit: the stream is broken, later chunks give no events. */
	overflow: SseEventTooLargeError | undefined;

	constructor(private readonly maxEventChars = MAX_EVENT_CHARS) {}

	/**
	 * Feeds a chunk; returns the events it completed (none after [DONE]). When an event grows past the limit, the
	 * events before it are returned and `overflow` is set: the caller must check it (consumeSse throws it).
	 */
	push(chunk: Uint8Array | string): SseEvent[] {
		if (this.done || this.overflow) return [];
		const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
		return this.feed(text);
	}

	/**
	 * The source has ended. A last line without its line end still counts, but an event never closed by a blank line
	 * is dropped (it may be cut short) — except `data: [DONE]`, which cannot be half of anything.
	 */
	end(): SseEvent[] {
		if (this.done || this.overflow) return [];
		const events = this.feed(this.decoder.decode());
		if (this.partialLine !== '') {
			const line = this.partialLine;
			this.partialLine = '';
			this.line(line, events);
		}
		if (!this.done && this.dataLines.join('\n').trim() === DONE_MARKER) this.done = true;
		this.dataLines = [];
		this.eventName = '';
		this.eventChars = 0;
		return events;
	}

	private feed(input: string): SseEvent[] {
		const events: SseEvent[] = [];
		if (!this.scan(input, events)) {
			// What was held goes; nothing more is read (no later byte can end that event cleanly).
			this.overflow = new SseEventTooLargeError(this.maxEventChars);
			this.partialLine = '';
			this.dataLines = [];
		}
		return events;
	}

	/** Reads the text into events; false when an event grew past the limit (the reading stopped there). */
	private scan(input: string, events: SseEvent[]): boolean {
		let text = input;
		if (this.startOfStream && text.length > 0) {
			this.startOfStream = false;
			if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
		}
		let start = 0;
		if (this.afterCR && text.length > 0) {
			if (text.charCodeAt(0) === 10) start = 1;
			this.afterCR = false;
		}
		for (let i = start; i < text.length; i++) {
			const code = text.charCodeAt(i);
			if (code !== 10 && code !== 13) continue;
			if (this.tooLarge(this.partialLine.length + i - start)) return false;
			const line = this.partialLine + text.slice(start, i);
			this.partialLine = '';
			if (code === 13) {
				if (i + 1 === text.length) this.afterCR = true;
				else if (text.charCodeAt(i + 1) === 10) i++;
			}
			start = i + 1;
			this.line(line, events);
			if (this.done) return true;
		}
		if (this.tooLarge(this.partialLine.length + text.length - start)) return false;
		this.partialLine += text.slice(start);
		return true;
	}

	private line(line: string, events: SseEvent[]): void {
		if (line === '') {
			this.dispatch(events);
			return;
		}
		if (line.startsWith(':')) return; // a comment, often a keep-alive
		const colon = line.indexOf(':');
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = colon === -1 ? '' : line.slice(colon + 1);
		if (value.startsWith(' ')) value = value.slice(1);
		if (field === 'data') {
			// `[DONE]` starting an event ends the stream now: it cannot be half of anything.
			if (this.dataLines.length === 0 && value.trim() === DONE_MARKER) {
				this.done = true;
				this.eventName = '';
				return;
			}
			this.dataLines.push(value);
			this.eventChars += value.length + 1;
		} else if (field === 'event') this.eventName = value;
		else if (field === 'id' && !value.includes('\0')) this.lastId = value;
		// 'retry' and unknown fields carry nothing a client of this service needs.
	}

	/** Whether `pending` characters of the current line, after the event's data lines, are past the limit. */
	private tooLarge(pending: number): boolean {
		return this.eventChars + pending > this.maxEventChars;
	}

	private dispatch(events: SseEvent[]): void {
		const lines = this.dataLines;
		const name = this.eventName;
		this.dataLines = [];
		this.eventName = '';
		this.eventChars = 0;
		if (lines.length === 0) return;
		const data = lines.join('\n');
		if (data.trim() === DONE_MARKER) {
			this.done = true;
			return;
		}
		const event: SseEvent = { event: name || 'message', data };
		if (this.lastId !== undefined) event.id = this.lastId;
		events.push(event);
	}
}

/** What `onEvent` returns to end the reading at once: the events proved the answer whole (a terminal event). */
export const STOP = 'stop';

/**
 * Reads a byte stream to its end, to `[DONE]` or to an event after which `onEvent` returns STOP, handing each event
 * to `onEvent` as soon as it is complete. Resolves with whether `[DONE]` arrived and whether `onEvent` stopped it; a
 * failing source, or an event past MAX_EVENT_CHARS (SseEventTooLargeError), rejects (the caller decides what a broken
 * stream means, and closes it).
 */
export async function consumeSse(
	source: AsyncIterable<Uint8Array | string>,
	onEvent: (event: SseEvent) => void | typeof STOP | Promise<void | typeof STOP>,
): Promise<{ done: boolean; stopped: boolean }> {
	const parser = new SseParser();
	for await (const chunk of source) {
		for (const event of parser.push(chunk)) {
			if ((await onEvent(event)) === STOP) return { done: parser.done, stopped: true };
		}
		if (parser.overflow) throw parser.overflow;
		if (parser.done) return { done: true, stopped: false };
	}
	for (const event of parser.end()) {
		if ((await onEvent(event)) === STOP) return { done: parser.done, stopped: true };
	}
	return { done: parser.done, stopped: false };
}
