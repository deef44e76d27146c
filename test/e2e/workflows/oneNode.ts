// Workflows around one Gen Gateway node, with n8n's node settings (as n8n 1.x stores them in workflow JSON).
import { linearWorkflow, nodeType, type NodeSpec } from '../n8n';

/** n8n's per-node settings: "Retry On Fail" and "On Error" (1.x: `onError`; the older `continueOnFail` is legacy). */
export interface NodeSettings {
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
}

export type SettingsNodeSpec = NodeSpec & NodeSettings;

export interface CredentialRef {
	id: string;
	name: string;
}

/** A Gen Gateway Video node. */
export function videoNode(
	name: string,
	credential: CredentialRef,
	parameters: Record<string, unknown>,
	settings: NodeSettings = {},
): SettingsNodeSpec {
	return {
		name,
		type: nodeType('genGatewayVideo'),
		parameters,
		credentials: { genGatewayApi: { id: credential.id, name: credential.name } },
		...settings,
	};
}

/** A Set node (raw JSON) then Split Out: one item per row, from the manual trigger. */
export function rowsNodes(rows: Array<Record<string, unknown>>): NodeSpec[] {
	return [
		{
			name: 'Rows',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			parameters: { mode: 'raw', jsonOutput: JSON.stringify({ rows }) },
		},
		{
			name: 'One Item per Row',
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			parameters: { fieldToSplitOut: 'rows', options: {} },
		},
	];
}

export { linearWorkflow };
