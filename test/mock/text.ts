/** The deterministic "model" behind chat and responses: it echoes the last user text. */

/** Text of a message content: a string, or an array of parts with `text`. */
export function contentText(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) {
		return content
			.map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : ''))
			.filter(Boolean)
			.join('\n');
	}
	return '';
}

/** Rough token count: whitespace-separated words (deterministic, good enough for usage fields). */
export const countTokens = (text: string): number => text.split(/\s+/).filter(Boolean).length;

export interface Reply {
	text: string;
	finishReason: 'stop' | 'length';
}

/** `Echo: <text>`, or `{"echo":"<text>"}` in JSON mode; plain replies are cut at maxTokens words. */
export function echoReply(userText: string, jsonMode: boolean, maxTokens?: number): Reply {
	if (jsonMode) return { text: JSON.stringify({ echo: userText }), finishReason: 'stop' };
	const text = `Echo: ${userText}`;
	const words = text.match(/\S+\s*/g) ?? [];
	if (maxTokens !== undefined && maxTokens > 0 && words.length > maxTokens) {
		return { text: words.slice(0, maxTokens).join('').trimEnd(), finishReason: 'length' };
	}
	return { text, finishReason: 'stop' };
}

/** Splits a reply into several stream deltas (word by word, at least two pieces when possible). */
export function deltas(text: string): string[] {
	const words = text.match(/\s*\S+/g) ?? [];
	if (words.length >= 2) return words;
	const half = Math.ceil(text.length / 2);
	return [text.slice(0, half), text.slice(half)].filter(Boolean);
}
