/* eslint-disable @typescript-eslint/no-explicit-any */
import { randomId } from '../support/home';

export interface NodeSpec {
	name: string;
	type: string;
	typeVersion?: number;
	parameters?: Record<string, unknown>;
	/** e.g. `{ genGatewayApi: { id, name } }` */
	credentials?: Record<string, { id: string; name: string }>;
}

/** The trigger linearWorkflow() starts from; `n8n execute` starts at it. */
export const TRIGGER_NAME = 'When clicking Execute';

/** A workflow: a Manual Trigger, then the given nodes one after another. */
export function linearWorkflow(name: string, nodes: NodeSpec[], id = randomId()): Record<string, unknown> {
	const all = [{ name: TRIGGER_NAME, type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} }, ...nodes];
	const connections: Record<string, unknown> = {};
	for (let i = 0; i + 1 < all.length; i++) {
		connections[all[i].name] = { main: [[{ node: all[i + 1].name, type: 'main', index: 0 }]] };
	}
	return {
		id,
		name,
		active: false,
		settings: { executionOrder: 'v1' },
		connections,
		nodes: all.map((node, index) => ({
			id: `${randomId(8)}-${index}`,
			typeVersion: 1,
			parameters: {},
			position: [index * 220, 0],
			...node,
		})),
	};
}

/** The items one node produced in a run that `n8n execute` printed. */
export function nodeItems(run: any, nodeName: string, output = 0, runIndex = 0): any[] {
	const runs = run?.data?.resultData?.runData?.[nodeName];
	if (!runs) throw new Error(`node "${nodeName}" did not run; ran: ${Object.keys(run?.data?.resultData?.runData ?? {}).join(', ')}`);
	return runs[runIndex]?.data?.main?.[output] ?? [];
}

/** The `json` of every item one node produced. */
export function nodeJson(run: any, nodeName: string, output = 0): any[] {
	return nodeItems(run, nodeName, output).map((item) => item.json);
}

/** The error a run stopped with (the node's error as n8n stored it), or undefined. */
export function runError(run: any): any {
	return run?.data?.resultData?.error;
}
