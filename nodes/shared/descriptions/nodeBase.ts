import { NodeConnectionTypes } from 'n8n-workflow';
import type { INodeProperties, INodePropertyOptions, INodeTypeDescription } from 'n8n-workflow';

/**
 * What every Gen Gateway node's description says alike: version 1, one main input and output, the Gen Gateway
 * credential. A fresh object each call, so no two nodes share an array. n8n's lint rules read `icon`, `group`,
 * `subtitle` and `usableAsTool` from the class's own object literal: those stay in each node file.
 */
export function nodeBase(): Pick<INodeTypeDescription, 'version' | 'inputs' | 'outputs' | 'credentials'> {
	return {
		version: 1,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'genGatewayApi', required: true }],
	};
}

/** The Operation selector: its options as the node lists them, and the one chosen by default. */
export function operationProperty(options: INodePropertyOptions[], defaultOperation: string): INodeProperties {
	return {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		options,
		default: defaultOperation,
	};
}
