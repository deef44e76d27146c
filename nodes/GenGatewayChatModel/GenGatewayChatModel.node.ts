import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import type { INodeType, INodeTypeDescription, ISupplyDataFunctions, SupplyData } from 'n8n-workflow';

import { modelSearch } from '../shared/descriptions/models';
import { modelLocator } from '../shared/descriptions/requestFields';
import { samplingOption, textTimeoutOption } from '../shared/descriptions/chatOptions';
import { MAX_ANSWER_TIME, timeoutMsOf, totalBoundMsOf, totalBoundOption } from '../shared/descriptions/timeoutOption';
import { noteSupply } from '../shared/run/callIdentity';
import { gatewayChatModel } from './gatewayChatModel';
import { loadAiNodeSdk, requireN8n2Host, supplyModelFailure } from './sdkHost';

interface ModelOptions {
	temperature?: number;
	maxTokens?: number;
	topP?: number;
	responseFormat?: 'text' | 'json_object';
	timeout?: number;
	maxRetries?: number;
	maxAnswerTime?: number;
}

/**
 * The gateway as the model of n8n's AI Agent, Basic LLM Chain and every other root node that takes a chat model:
 * `supplyModel` of `@n8n/ai-node-sdk` (a peer, shipped by n8n 2.x) with this package's credential, loaded only when a
 * workflow uses the node (sdkHost.ts: how n8n 1.x is told apart).
 */
export class GenGatewayChatModel implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gen Gateway Chat Model',
		name: 'genGatewayChatModel',
		description: 'A chat model of the Gen Gateway service for the AI Agent and other AI root nodes (n8n 2.x)',
		defaults: { name: 'Gen Gateway Chat Model' },
		version: [1],
		subtitle: '={{$parameter["model"]?.value ?? $parameter["model"] ?? ""}}',
		icon: { light: 'file:genGatewayChatModel.svg', dark: 'file:genGatewayChatModel.dark.svg' },
		group: ['transform'],
		codex: {
			categories: ['assistant'],
			subcategories: {
				AI: ['Language Models', 'Root Nodes'],
				'Language Models': ['Chat Models (Recommended)'],
			},
			resources: {
				primaryDocumentation: [
					{ url: 'https://github.com/gen-gateway/n8n-nodes-gen-gateway/blob/main/docs/ai-agent.md' },
				],
			},
		},
		inputs: [],
		outputs: [NodeConnectionTypes.AiLanguageModel],
		outputNames: ['Model'],
		credentials: [{ name: 'genGatewayApi', required: true }],
		properties: [
			{
				displayName:
					'Connect this node to the Chat Model input of an AI Agent, a Basic LLM Chain or another AI root node. Needs n8n 2.x.',
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				displayName:
					'With the JSON response format, say "JSON" in the prompt or the system message; the model must support it',
				name: 'jsonNotice',
				type: 'notice',
				default: '',
				displayOptions: { show: { '/options.responseFormat': ['json_object'] } },
			},
			modelLocator('e.g. gpt-4o-mini'),
			{
				displayName: 'Options',
				name: 'options',
				placeholder: 'Add Option',
				description: 'Additional options to add',
				type: 'collection',
				default: {},
				options: [
					totalBoundOption(
						MAX_ANSWER_TIME,
						'Passing it hangs up and fails the call; it counts as paid and is not resent. An answer that is not ' +
							'streamed must arrive whole within the Timeout.',
					),
					{
						displayName: 'Maximum Number of Tokens',
						name: 'maxTokens',
						default: -1,
						description: 'The most tokens the model may generate in one answer (-1: the service decides)',
						type: 'number',
						typeOptions: { minValue: -1 },
					},
					{
						displayName: 'Maximum Retries',
						name: 'maxRetries',
						default: 2,
						description:
							'How often a call is tried again when the service said "not now" (429, 502, 503) or could not be reached. A call whose outcome is unknown (dropped after it was sent, timed out, 500) is never resent: it may have been paid for.',
						type: 'number',
						typeOptions: { minValue: 0, maxValue: 10 },
					},
					{
						displayName: 'Response Format',
						name: 'responseFormat',
						default: 'text',
						type: 'options',
						options: [
							{ name: 'Text', value: 'text', description: 'Regular text response' },
							{
								name: 'JSON',
								value: 'json_object',
								description: 'JSON mode: the model answers with one valid JSON object',
							},
						],
					},
					samplingOption('temperature', 'chatModel'),
					textTimeoutOption('chatModel'),
					samplingOption('topP', 'chatModel'),
				],
			},
		],
	};

	methods = { listSearch: { searchModels: modelSearch('chatModel') } };

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		// Before any wait: which model of the root's try this is names its row (shared/run/callIdentity.ts).
		noteSupply(this);
		const sdk = await loadAiNodeSdk(this, itemIndex);
		const model = this.getNodeParameter('model', itemIndex, '', { extractValue: true }) as string;
		const options = this.getNodeParameter('options', itemIndex, {}) as ModelOptions;
		if (typeof model !== 'string' || model.trim() === '') {
			throw new NodeOperationError(this.getNode(), 'No model chosen: pick one from the list or enter its ID', {
				itemIndex,
			});
		}
		requireN8n2Host(this, itemIndex);
		// Our own model on the package's transport (gatewayChatModel.ts), not the SDK's OpenAI client.
		const chatModel = gatewayChatModel(sdk, this, {
			model: model.trim(),
			itemIndex,
			temperature: options.temperature,
			topP: options.topP,
			maxTokens: options.maxTokens,
			responseFormat: options.responseFormat,
			timeoutMs: timeoutMsOf(options.timeout),
			maxAnswerMs: totalBoundMsOf(MAX_ANSWER_TIME, options.maxAnswerTime),
			maxRetries: options.maxRetries ?? 2,
		});
		try {
			return sdk.supplyModel(this, chatModel);
		} catch (error) {
			throw supplyModelFailure(this, itemIndex, error);
		}
	}
}
