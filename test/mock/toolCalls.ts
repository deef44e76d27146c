/**
 * The mock "model"'s tool use in chat completions, scripted by markers in the last user message (deterministic, so an
 * agent built on a client nobody here wrote, e.g. n8n's OpenAI Chat Model node, can be driven end to end):
 * - tools offered and `[[tool=NAME]]` in the last user message → one call of the offered tool named NAME (exact name
 *   first, else the first offered name containing NAME, case-insensitive); `tool_choice` naming a function forces it,
 *   `tool_choice: 'required'` without a marker calls the first tool offered;
 * - arguments come from the tool's JSON schema: `[[arg.KEY=VALUE]]` (VALUE parsed as JSON when it is JSON), else a
 *   property with a default gets it, an enum its first value, a string the user's text without the tool markers (other
 *   markers, such as a video's `[[instant]]`, stay), a number its minimum or 5, a boolean false;
 * - `[[calls=N]]` (1-8) → N calls of that tool in the one answer, each with its own id and the same arguments (a
 *   model asking for "two pictures of a lighthouse": the agent runs one answer's calls at once);
 * - the conversation ends with `tool` messages → a final answer quoting each tool result.
 * Without the marker (or with `tool_choice: 'none'`) the chat echoes as before.
 */
import { randomBytes } from 'crypto';

import { contentText } from './text';

export interface OfferedTool {
	type: string;
	function: { name: string; description?: string; parameters?: JsonSchema };
}

export interface JsonSchema {
	type?: string | string[];
	properties?: Record<string, JsonSchema>;
	required?: string[];
	enum?: unknown[];
	default?: unknown;
	minimum?: number;
	anyOf?: JsonSchema[];
	[key: string]: unknown;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: string; function: { name: string } };

export interface ChatMessage {
	role: string;
	content?: unknown;
	tool_call_id?: string;
	tool_calls?: Array<{ id?: string; function?: { name?: string } }>;
	[key: string]: unknown;
}

export interface ToolCall {
	id: string;
	type: 'function';
	function: { name: string; arguments: string };
}

export type ToolTurn = { kind: 'call'; calls: ToolCall[] } | { kind: 'answer'; text: string } | { kind: 'none' };

const TOOL_MARKER = /\[\[tool=([^\]]+)\]\]/i;
const ARG_MARKER = /\[\[arg\.([A-Za-z0-9_-]+)=([^\]]*)\]\]/gi;
const CALLS_MARKER = /\[\[calls=(\d+)\]\]/i;

/** The user's text without the tool markers (other markers stay: they script what the tool does at the mock). */
export function withoutToolMarkers(text: string): string {
	return text
		.replace(new RegExp(TOOL_MARKER.source, 'gi'), '')
		.replace(ARG_MARKER, '')
		.replace(new RegExp(CALLS_MARKER.source, 'gi'), '')
		.replace(/\s{2,}/g, ' ')
		.trim();
}

function parseValue(raw: string): unknown {
	try {
		return JSON.parse(raw);
	} catch {
		return raw;
	}
}

/** `[[arg.KEY=VALUE]]` markers of a text. */
export function argMarkers(text: string): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const match of text.matchAll(ARG_MARKER)) out[match[1]] = parseValue(match[2].trim());
	return out;
}

function typeOf(schema: JsonSchema): string | undefined {
	if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null');
	if (schema.type) return schema.type;
	if (schema.anyOf?.some((s) => s.type === 'object')) return 'object';
	return undefined;
}

/** The value the mock "chooses" for one property of a tool's schema. */
export function valueFor(schema: JsonSchema, text: string): unknown {
	// A default (n8n's `$fromAI(key, description, type, default)`) is what a model would usually keep.
	if (schema.default !== undefined) return schema.default;
	if (schema.enum && schema.enum.length > 0) return schema.enum[0];
	switch (typeOf(schema)) {
		case 'number':
		case 'integer':
			return schema.minimum ?? 5;
		case 'boolean':
			return false;
		case 'object':
			return { text };
		case 'array':
			return [text];
		default:
			return text;
	}
}

/** Arguments for a tool from its parameters schema and the user's message. */
export function toolArguments(parameters: JsonSchema | undefined, userText: string): Record<string, unknown> {
	const explicit = argMarkers(userText);
	const text = withoutToolMarkers(userText);
	const args: Record<string, unknown> = {};
	for (const [key, schema] of Object.entries(parameters?.properties ?? {})) {
		args[key] = key in explicit ? explicit[key] : valueFor(schema, text);
	}
	// Markers for keys the schema does not list are passed too: a test can send what a careless model would.
	for (const [key, value] of Object.entries(explicit)) if (!(key in args)) args[key] = value;
	return args;
}

/** The offered tool a marker names: the exact name, else the first name containing it (case-insensitive). */
export function pickTool(tools: OfferedTool[], wanted: string): OfferedTool | undefined {
	const lower = wanted.trim().toLowerCase();
	return (
		tools.find((tool) => tool.function.name === wanted.trim()) ??
		tools.find((tool) => tool.function.name.toLowerCase() === lower) ??
		tools.find((tool) => tool.function.name.toLowerCase().includes(lower))
	);
}

/** `Tool NAME returned: RESULT` for each trailing tool message (names looked up from the assistant's calls). */
export function finalAnswer(messages: ChatMessage[]): string {
	const results: ChatMessage[] = [];
	for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) results.unshift(messages[i]);
	const names = new Map<string, string>();
	for (const message of messages) {
		for (const call of message.tool_calls ?? []) if (call.id && call.function?.name) names.set(call.id, call.function.name);
	}
	return results
		.map((result) => `Tool ${names.get(String(result.tool_call_id)) ?? 'call'} returned: ${contentText(result.content)}`)
		.join('\n');
}

/** What the mock model does in this turn: call a tool, answer after tool results, or neither (then it echoes). */
export function toolTurn(messages: ChatMessage[], tools: OfferedTool[] | undefined, toolChoice?: ToolChoice): ToolTurn {
	if (messages.length > 0 && messages[messages.length - 1].role === 'tool') {
		return { kind: 'answer', text: finalAnswer(messages) };
	}
	if (!tools || tools.length === 0 || toolChoice === 'none') return { kind: 'none' };
	const userText = contentText([...messages].reverse().find((m) => m.role === 'user')?.content);
	const forced = typeof toolChoice === 'object' ? toolChoice.function.name : undefined;
	// 'required' without a marker: the first tool offered.
	const wanted = forced ?? TOOL_MARKER.exec(userText)?.[1] ?? (toolChoice === 'required' ? tools[0].function.name : undefined);
	if (wanted === undefined) return { kind: 'none' };
	const tool = pickTool(tools, wanted);
	if (!tool) return { kind: 'none' };
	const args = JSON.stringify(toolArguments(tool.function.parameters, userText));
	const count = Math.min(8, Math.max(1, Number(CALLS_MARKER.exec(userText)?.[1] ?? 1)));
	const calls = Array.from({ length: count }, (): ToolCall => ({
		id: `call_${randomBytes(6).toString('hex')}`,
		type: 'function',
		function: { name: tool.function.name, arguments: args },
	}));
	return { kind: 'call', calls };
}
