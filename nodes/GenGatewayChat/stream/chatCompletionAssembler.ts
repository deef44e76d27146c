import type { IDataObject } from 'n8n-workflow';

import { errorMessageOf } from '../../shared/transport/answerError';
import { StreamEventError } from './assembler';
import type { StreamAssembler } from './assembler';

/**
 * `chat.completion.chunk` events → one `chat.completion`, exactly as the service would have returned it unstreamed:
 * content and tool-call arguments concatenated per choice, the last finish_reason, and usage (sent on the last chunk).
 */

interface ToolCallParts {
	id?: string;
	type?: string;
	name: string;
	arguments: string;
}

interface ChoiceParts {
	role: string;
	content: string;
	sawContent: boolean;
	refusal?: string;
	finishReason: string | null;
	toolCalls: Map<number, ToolCallParts>;
}

export class ChatCompletionAssembler implements StreamAssembler {
	private readonly choices = new Map<number, ChoiceParts>();

	private readonly head: IDataObject = {};

	private usage: IDataObject | undefined;

	add(eventName: string, chunk: IDataObject): string {
		// `data: {"error": {...}}`, or `event: error` whose data is the error itself (`{"message": ..., "code": ...}`).
		const message =
			errorMessageOf(chunk) ??
			(eventName === 'error'
				? typeof chunk.message === 'string'
					? chunk.message
					: 'The service reported an error in the stream'
				: undefined);
		if (message !== undefined) throw new StreamEventError(message);
		for (const key of ['id', 'created', 'model', 'system_fingerprint']) {
			if (chunk[key] !== undefined && chunk[key] !== null) this.head[key] = chunk[key];
		}
		if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage as IDataObject;
		let added = '';
		const choices = Array.isArray(chunk.choices) ? (chunk.choices as IDataObject[]) : [];
		for (const choice of choices) {
			const index = typeof choice.index === 'number' ? choice.index : 0;
			const parts = this.choice(index);
			const delta = (choice.delta ?? {}) as IDataObject;
			if (typeof delta.role === 'string' && delta.role) parts.role = delta.role;
			if (typeof delta.content === 'string') {
				parts.content += delta.content;
				parts.sawContent = true;
				if (index === 0) added += delta.content;
			}
			if (typeof delta.refusal === 'string') parts.refusal = (parts.refusal ?? '') + delta.refusal;
			if (Array.isArray(delta.tool_calls)) this.addToolCalls(parts, delta.tool_calls as IDataObject[]);
			if (typeof choice.finish_reason === 'string') parts.finishReason = choice.finish_reason;
		}
		return added;
	}

	text(): string {
		return this.choices.get(0)?.content ?? '';
	}

	/** A chat stream is whole only with `[DONE]`: a finish_reason may come before the usage chunk. */
	finished(): boolean {
		return false;
	}

	result(): IDataObject {
		const indexes = [...this.choices.keys()].sort((a, b) => a - b);
		const choices = indexes.map((index) => {
			const parts = this.choices.get(index) as ChoiceParts;
			const message: IDataObject = {
				role: parts.role,
				content: parts.sawContent || parts.toolCalls.size === 0 ? parts.content : null,
			};
			if (parts.refusal !== undefined) message.refusal = parts.refusal;
			if (parts.toolCalls.size > 0) {
				message.tool_calls = [...parts.toolCalls.entries()]
					.sort(([a], [b]) => a - b)
					.map(([, call]) => ({
						id: call.id,
						type: call.type ?? 'function',
						function: { name: call.name, arguments: call.arguments },
					}));
			}
			return { index, message, finish_reason: parts.finishReason };
		});
		const response: IDataObject = { ...this.head, object: 'chat.completion', choices };
		if (this.usage) response.usage = this.usage;
		return response;
	}

	private choice(index: number): ChoiceParts {
		let parts = this.choices.get(index);
		if (!parts) {
			parts = { role: 'assistant', content: '', sawContent: false, finishReason: null, toolCalls: new Map() };
			this.choices.set(index, parts);
		}
		return parts;
	}

	private addToolCalls(parts: ChoiceParts, deltas: IDataObject[]): void {
		for (const delta of deltas) {
			const index = typeof delta.index === 'number' ? delta.index : parts.toolCalls.size;
			let call = parts.toolCalls.get(index);
			if (!call) {
				call = { name: '', arguments: '' };
				parts.toolCalls.set(index, call);
			}
			if (typeof delta.id === 'string') call.id = delta.id;
			if (typeof delta.type === 'string') call.type = delta.type;
			const fn = (delta.function ?? {}) as IDataObject;
			if (typeof fn.name === 'string') call.name += fn.name;
			if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
		}
	}
}
