import type { IExecuteFunctions } from 'n8n-workflow';

import { asNodeError } from '../transport/errors';
import type { RunPolicy } from './runItems';

/**
 * n8n (since 1.101) streams some executions to a chat (Chat Trigger, Webhook with streaming). When a node fails
 * there, n8n sends the chat one error chunk whose content is the error's *description* (workflow-execute's
 * handleNodeExecutionError), i.e. only our hint; the service's own words are in the message. So a node failing while
 * its execution streams to a chat puts the message in front of the description, once, after its last try.
 */

type ChunkingFunctions = Partial<Pick<IExecuteFunctions, 'isStreaming' | 'sendChunk'>>;

/** n8n streams this execution to a chat; older versions have no such functions. */
export function streamsToN8nChat(ctx: IExecuteFunctions): boolean {
	const chunking = ctx as ChunkingFunctions;
	if (typeof chunking.isStreaming !== 'function' || typeof chunking.sendChunk !== 'function') return false;
	return ctx.isStreaming() === true;
}

/** The error the node fails with, its description leading with the message when a chat will show it. */
function withMessageForChat<T>(ctx: IExecuteFunctions, error: T): T {
	if (!streamsToN8nChat(ctx)) return error;
	const record = error as { message?: unknown; description?: unknown };
	const message = typeof record.message === 'string' ? record.message : '';
	const description = typeof record.description === 'string' ? record.description : '';
	if (message === '' || description.startsWith(message)) return error;
	record.description = description ? `${message}\n\n${description}` : message;
	return error;
}

/**
 * Chat and Image: items one by one; the run fails with a node error for the item, its description leading with the
 * message when the execution streams to a chat (n8n shows a chat only the description).
 */
export function chatRunPolicy(ctx: IExecuteFunctions, errorFields: readonly string[]): RunPolicy {
	return {
		errorFields,
		failure: (error, itemIndex) => withMessageForChat(ctx, asNodeError(ctx, error, itemIndex)),
	};
}
