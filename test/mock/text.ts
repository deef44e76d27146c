/** The deterministic "model" behind chat and responses: it echoes the last user text. */

/**
 * What the "model" sees of an image part (chat `image_url`, responses `input_image`): `[image <mime>, <n> bytes]` for
 * a data: URL, `[image <url>]` otherwise, so a test can tell which image arrived.
 */
function imageNote(part: Record<string, unknown>): string {
	const url = part.type === 'image_url' ? (part.image_url as { url?: unknown } | undefined)?.url : part.image_url;
	if (typeof url !== 'string') return '';
	const data = /^data:([^;,]+);base64,([\s\S]*)$/.exec(url);
	return data ? `[image ${data[1]}, ${Buffer.from(data[2], 'base64').length} bytes]` : `[image ${url}]`;
}

const DETAILS = ['auto', 'low', 'high'];

/**
 * The first malformed image part of a message list, as a 400 message (`messages.0.content.1.image_url.url: ...`):
 * chat parts are `{type:'image_url', image_url:{url, detail?}}`, responses parts `{type:'input_image', image_url, detail?}`.
 */
export function imagePartProblem(list: string, messages: Array<{ content?: unknown }>): string | undefined {
	for (const [m, message] of messages.entries()) {
		if (!Array.isArray(message.content)) continue;
		for (const [p, part] of (message.content as Array<Record<string, unknown>>).entries()) {
			const at = `${list}.${m}.content.${p}`;
			if (part?.type !== 'image_url' && part?.type !== 'input_image') continue;
			const inChat = part.type === 'image_url';
			const image = inChat ? ((part.image_url ?? {}) as Record<string, unknown>) : part;
			const where = inChat ? `${at}.image_url.` : `${at}.`;
			const url = inChat ? image.url : part.image_url;
			if (typeof url !== 'string' || !/^(https?:\/\/|data:image\/[\w.+-]+;base64,)/.test(url)) {
				return `${where}${inChat ? 'url' : 'image_url'}: must be an http(s) URL or a data:image/...;base64, URL`;
			}
			if (image.detail !== undefined && !DETAILS.includes(String(image.detail))) {
				return `${where}detail: must be one of ${DETAILS.join(', ')}`;
			}
		}
	}
	return undefined;
}

function partText(part: unknown): string {
	if (!part || typeof part !== 'object') return '';
	if ('text' in part) return String((part as { text: unknown }).text);
	return imageNote(part as Record<string, unknown>);
}

/** Text of a message content: a string, or an array of parts with `text` (and images, noted). */
export function contentText(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map(partText).filter(Boolean).join('\n');
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
