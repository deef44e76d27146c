import { NodeOperationError } from 'n8n-workflow';
import type { ISupplyDataFunctions } from 'n8n-workflow';

type AiNodeSdk = typeof import('@n8n/ai-node-sdk');

/** What a user of n8n 1.x reads when a workflow uses this node: the SDK it builds on ships with n8n 2.x only. */
export const NEEDS_N8N_2 =
	'Gen Gateway Chat Model needs n8n 2.x: it builds on n8n\'s AI node SDK (@n8n/ai-node-sdk), which n8n 1.x does not have';

const NEEDS_N8N_2_HINT =
	"Update n8n to 2.x, or use n8n's OpenAI Chat Model with an OpenAI credential whose Base URL is the gateway's /v1 (see docs/ai-agent.md).";

/**
 * The SDK is loaded only when a workflow uses the node, so the package and its other nodes still load on n8n 1.x
 * (whose node loader stops at the first node file that fails to load).
 */
export async function loadAiNodeSdk(ctx: ISupplyDataFunctions, itemIndex: number): Promise<AiNodeSdk> {
	try {
		return await import('@n8n/ai-node-sdk');
	} catch {
		throw new NodeOperationError(ctx.getNode(), NEEDS_N8N_2, { itemIndex, description: NEEDS_N8N_2_HINT });
	}
}

/**
 * The SDK can be found on n8n 1.x too (a copy in a folder above n8n's, which n8n puts on NODE_PATH), but n8n 1.x
 * lacks the host side the SDK is built for (`helpers.getSecureEgressFilter`, new in n8n 2.x): the node says it needs
 * n8n 2.x there, before anything is sent.
 */
export function requireN8n2Host(ctx: ISupplyDataFunctions, itemIndex: number): void {
	const helpers = ctx.helpers as unknown as Record<string, unknown> | undefined;
	if (typeof helpers?.getSecureEgressFilter === 'function') return;
	throw new NodeOperationError(ctx.getNode(), NEEDS_N8N_2, {
		itemIndex,
		description: `${NEEDS_N8N_2_HINT} (The SDK was found, but this n8n lacks its host side: ` +
			'helpers.getSecureEgressFilter is not a function.)',
	});
}

/**
 * The SDK can be found on n8n 1.x too (a copy in a folder above n8n's, which n8n puts on NODE_PATH), but its other
 * half is in n8n 2.x itself: `supplyModel` calls helpers 1.x does not have (`getSecureEgressFilter`) and fails with a
 * TypeError. A failure on such a host says what it means; any other failure keeps its own message.
 */
export function supplyModelFailure(ctx: ISupplyDataFunctions, itemIndex: number, error: unknown): NodeOperationError {
	const helpers = ctx.helpers as unknown as Record<string, unknown> | undefined;
	if (typeof helpers?.getSecureEgressFilter !== 'function') {
		const found = error instanceof Error ? error.message : String(error);
		return new NodeOperationError(ctx.getNode(), NEEDS_N8N_2, {
			itemIndex,
			description: `${NEEDS_N8N_2_HINT} (The SDK was found, but this n8n lacks its host side: ${found}.)`,
		});
	}
	if (error instanceof NodeOperationError) return error;
	return new NodeOperationError(ctx.getNode(), error as Error, { itemIndex });
}
