// The workflow the queue-mode test runs: a production Webhook that answers with the mp4 the Video node made.
import { randomUUID } from 'crypto';

import { nodeType, randomId } from '../n8n';

export const WEBHOOK_PATH = 'gen-gateway-video';

/**
 * POST /webhook/<WEBHOOK_PATH> with `{"prompt": "..."}` → Gen Gateway Video generates (submit, wait polling every
 * second, download) → the webhook answers with the first item's binary `data` (responseMode `lastNode`,
 * responseData `firstEntryBinary`): the mp4 bytes themselves.
 */
export function videoWebhookWorkflow(credential: { id: string; name: string }): Record<string, unknown> {
	return {
		id: randomId(),
		name: 'Queue mode: webhook → video',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: randomId(8),
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				// A production webhook's registration key; n8n's editor sets one on every webhook node.
				webhookId: randomUUID(),
				parameters: {
					httpMethod: 'POST',
					path: WEBHOOK_PATH,
					responseMode: 'lastNode',
					responseData: 'firstEntryBinary',
					responseBinaryPropertyName: 'data',
					options: {},
				},
			},
			{
				id: randomId(8),
				name: 'Video',
				type: nodeType('genGatewayVideo'),
				typeVersion: 1,
				position: [220, 0],
				parameters: {
					operation: 'generate',
					model: 'sd_2.0_fast_discount',
					prompt: '={{ $json.body.prompt }}',
					duration: 5,
					options: { pollInterval: 1 },
				},
				credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
			},
		],
		connections: { Webhook: { main: [[{ node: 'Video', type: 'main', index: 0 }]] } },
	};
}
