import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';
import type { ChatModelConfig, GenerateResult, Message, StreamChunk } from '@n8n/ai-node-sdk';

import { completeChat, streamChat } from './completionCall';
import type { CompletionSettings } from './completionCall';
import { generateResultOf, wireMessageList, wireTools } from './wireFormat';

type AiNodeSdk = typeof import('@n8n/ai-node-sdk');

/** What the node's parameters set on every call. */
interface GatewayModelOptions extends CompletionSettings {
	model: string;
	temperature?: number;
	topP?: number;
	/** Sent only when above 0 (-1: the service decides). */
	maxTokens?: number;
	responseFormat?: 'text' | 'json_object';
}

/**
 * The gateway as the SDK's chat model: a `BaseChatModel` of the SDK that n8n loaded (the SDK is an optional peer,
 * so the class is made from it at run time, sdkHost.ts), whose calls go through the package's transport
 * (completionCall.ts). The SDK wraps it for LangChain (tools via bindTools → withTools, usage, n8n's tracing).
 */
export function gatewayChatModel(sdk: AiNodeSdk, ctx: ISupplyDataFunctions, options: GatewayModelOptions) {
	class GenGatewayChatModel extends sdk.BaseChatModel {
		constructor() {
			super('gen-gateway', options.model, {
				temperature: options.temperature,
				topP: options.topP,
				maxTokens: options.maxTokens !== undefined && options.maxTokens > 0 ? options.maxTokens : undefined,
			});
		}

		/** The request body: the call's messages, the tools bound to this model, the node's options. */
		private body(messages: Message[], config?: ChatModelConfig): IDataObject {
			const merged = this.mergeConfig(config);
			const body: IDataObject = { model: this.modelId, messages: wireMessageList(messages) };
			const tools = wireTools(this.tools, (tool) => sdk.getParametersJsonSchema(tool));
			if (tools.length > 0) body.tools = tools;
			if (merged.temperature !== undefined) body.temperature = merged.temperature;
			if (merged.topP !== undefined) body.top_p = merged.topP;
			if (merged.maxTokens !== undefined) body.max_tokens = merged.maxTokens;
			if (merged.stopSequences?.length) body.stop = merged.stopSequences;
			if (options.responseFormat === 'json_object') body.response_format = { type: 'json_object' };
			return body;
		}

		async generate(messages: Message[], config?: ChatModelConfig): Promise<GenerateResult> {
			const completion = await completeChat(ctx, this.body(messages, config), options);
			return generateResultOf(completion);
		}

		async *stream(messages: Message[], config?: ChatModelConfig): AsyncIterable<StreamChunk> {
			const body = { ...this.body(messages, config), stream: true, stream_options: { include_usage: true } };
			yield* streamChat(ctx, body, options);
		}
	}
	return new GenGatewayChatModel();
}
