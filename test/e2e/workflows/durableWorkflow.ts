// examples/video-long-task-durable-wait.json as a production workflow for the e2e tests: its Manual Trigger swapped
// for a Webhook that answers at once, the prompt from the request body. The rest of the example is unchanged but for
// Check's Max Wait, which comes from the prompt for an endless task (1.5 minutes instead of 30).
import { randomUUID } from 'crypto';

import { loadExample, type ExampleWorkflow } from './examples';

export const DURABLE_EXAMPLE = 'video-long-task-durable-wait.json';

export interface DurableWorkflowOptions {
	id: string;
	webhookPath: string;
	/** The credential to name instead of the example's (e.g. the queue cluster's). */
	credential?: { id: string; name: string };
	/** The Wait node's seconds instead of the example's 70 (the node keeps its name). */
	waitSeconds?: number;
	/** Its seconds from its second run on (the loop's later rounds), when they differ from the first. */
	laterWaitSeconds?: number;
}

export function durableWebhookWorkflow(options: DurableWorkflowOptions): ExampleWorkflow {
	const example = loadExample(DURABLE_EXAMPLE);
	const copy = JSON.parse(JSON.stringify(example)) as ExampleWorkflow & {
		connections: Record<string, unknown>;
		nodes: Array<{ name: string; type: string; parameters: Record<string, unknown>; credentials?: unknown }>;
	};
	copy.id = options.id;
	copy.name = `${example.name} (webhook ${options.webhookPath})`;
	const trigger = copy.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger')!;
	const webhook = {
		...trigger,
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path: options.webhookPath, responseMode: 'onReceived', options: {} },
	};
	copy.nodes = copy.nodes.map((node) => (node === trigger ? webhook : node));
	copy.connections.Webhook = copy.connections[trigger.name];
	delete copy.connections[trigger.name];
	const submit = copy.nodes.find((node) => node.name === 'Submit Video')!;
	submit.parameters.prompt = '={{ $json.body.prompt }}';
	const check = copy.nodes.find((node) => node.name === 'Check Video')!;
	check.parameters.options = { maxWait: '={{ $json.request.prompt.includes("[[never]]") ? 1.5 : 30 }}' };
	if (options.credential) {
		for (const node of copy.nodes) if (node.credentials) node.credentials = { genGatewayApi: options.credential };
	}
	if (options.waitSeconds !== undefined) {
		const wait = copy.nodes.find((node) => node.type === 'n8n-nodes-base.wait')!;
		const { waitSeconds: first, laterWaitSeconds: later } = options;
		wait.parameters.amount = later === undefined ? first : `={{ $runIndex === 0 ? ${first} : ${later} }}`;
	}
	return copy;
}
