import { readdirSync, readFileSync } from 'fs';
import { resolve } from 'path';

import { readVideoParameters } from '../../nodes/GenGatewayVideo/model/parameters';
import { buildVideoRequest } from '../../nodes/GenGatewayVideo/model/requestBody';
import { loadPackageNodeTypes } from '../harness/engine';

/** The importable example workflows reference real node types and valid static parameters. */
const folder = resolve(__dirname, '../../examples');
const examples = readdirSync(folder)
	.filter((file) => file.endsWith('.json'))
	.map((file) => ({ file, workflow: JSON.parse(readFileSync(resolve(folder, file), 'utf8')) }));

interface ExampleNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
}

describe('examples/', () => {
	const nodeTypes = loadPackageNodeTypes();

	it('holds the documented workflows', () => {
		expect(examples.map((e) => e.file)).toEqual(
			expect.arrayContaining([
				'list-models.json',
				'chat.json',
				'image-to-binary.json',
				'video-generate-and-wait.json',
				'video-submit-now-resume-later.json',
				'video-batch.json',
				'video-long-task-durable-wait.json',
				'ai-agent-video-tool.json',
				'image-to-video.json',
				'form-upload-to-video.json',
				'video-recover-paid-tasks.json',
			]),
		);
	});

	it('ai-agent-video-tool: the model is Gen Gateway Chat Model on the package\'s credential, the tools are ours, filled by $fromAI', () => {
		const { workflow } = examples.find((e) => e.file === 'ai-agent-video-tool.json')!;
		const nodes = workflow.nodes as ExampleNode[];
		const models = Object.entries(workflow.connections as Record<string, Record<string, Array<Array<{ node: string }>>>>)
			.filter(([, outputs]) => outputs.ai_languageModel?.flat().some((target) => target.node === 'AI Agent'))
			.map(([name]) => nodes.find((n) => n.name === name)!);
		expect(models.map((n) => n.type)).toEqual(['n8n-nodes-gen-gateway.genGatewayChatModel']);
		expect(models[0].parameters.model).toEqual({ __rl: true, mode: 'id', value: 'gpt-4o-mini' });
		const tools = Object.entries(workflow.connections as Record<string, Record<string, Array<Array<{ node: string }>>>>)
			.filter(([, outputs]) => outputs.ai_tool?.flat().some((target) => target.node === 'AI Agent'))
			.map(([name]) => nodes.find((n) => n.name === name)!.type);
		expect(tools.sort()).toEqual(['genGatewayImageTool', 'genGatewayModelsTool', 'genGatewayVideoTool'].map((t) => `n8n-nodes-gen-gateway.${t}`));
		const video = nodes.find((n) => n.type.endsWith('.genGatewayVideoTool'))!.parameters;
		for (const field of ['prompt', 'duration', 'aspectRatio']) expect(String(video[field])).toMatch(/^=\{\{ \$fromAI\('/);
	});

	it.each(examples.map((e) => [e.file, e.workflow]))('%s: our nodes exist, use the shared credential, connect in a chain', (_, workflow) => {
		const nodes = workflow.nodes as ExampleNode[];
		for (const node of nodes.filter((n) => n.type.startsWith('n8n-nodes-gen-gateway.'))) {
			// n8n derives `<name>Tool` (an agent's tool) from a node that is usableAsTool.
			const base = node.type.replace(/Tool$/, '');
			expect(() => nodeTypes.getByNameAndVersion(base, 1)).not.toThrow();
			if (base !== node.type) expect(nodeTypes.getByNameAndVersion(base, 1).description.usableAsTool).toBe(true);
			expect(node.credentials).toEqual({ genGatewayApi: { id: 'GenGatewayMock01', name: 'Gen Gateway (mock)' } });
		}
		const names = new Set(nodes.map((n) => n.name));
		// main, and for an agent ai_languageModel / ai_tool.
		for (const [from, outputs] of Object.entries(workflow.connections as Record<string, Record<string, Array<Array<{ node: string }>>>>)) {
			expect(names.has(from)).toBe(true);
			for (const target of Object.values(outputs).flat(2)) expect(names.has(target.node)).toBe(true);
		}
	});

	it('static Video Generate parameters pass the local validation', () => {
		for (const { workflow } of examples) {
			for (const node of (workflow.nodes as ExampleNode[]).filter((n) => n.type.endsWith('.genGatewayVideo'))) {
				const p = node.parameters;
				if (p.operation !== 'generate' || String(p.prompt).startsWith('=')) continue;
				const ctx = { getNodeParameter: (name: string, _i: number, fallback?: unknown) => p[name] ?? fallback, getNode: () => ({ parameters: p }) };
				const { model, input } = readVideoParameters(ctx as never, 0);
				expect(() => buildVideoRequest(model, input)).not.toThrow();
			}
		}
	});

	it('video-recover-paid-tasks: Recover (Task Ledger and Workflow ID left to fill in) → Wait for Completion on Tasks only', () => {
		const workflow = examples.find((e) => e.file === 'video-recover-paid-tasks.json')!.workflow;
		const nodes = workflow.nodes as ExampleNode[];
		const byName = (name: string) => nodes.find((n) => n.name === name)!;
		// Empty: the editor flags both required fields until the user names a table and a workflow.
		expect(byName('Recover Paid Tasks').parameters).toEqual({ operation: 'recover', taskLedger: '', workflowId: '' });
		expect(byName('Wait for Completion').parameters).toMatchObject({ operation: 'waitForCompletion', taskId: '={{ $json.task_id }}' });
		const targets = (from: string) =>
			(workflow.connections[from].main as Array<Array<{ node: string }>>).map((output) => output.map((c) => c.node));
		expect(targets('When clicking \'Execute workflow\'')).toEqual([['Recover Paid Tasks']]);
		// Output 0 (Tasks) is waited for; output 1 (Unknown Outcome) must never reach a node that could pay.
		expect(targets('Recover Paid Tasks')).toEqual([['Wait for Completion'], []]);
		const recover = nodeTypes.getByNameAndVersion('n8n-nodes-gen-gateway.genGatewayVideo', 1).description;
		expect(recover.properties.find((p) => p.name === 'operation')!.options).toEqual(
			expect.arrayContaining([expect.objectContaining({ value: 'recover' })]),
		);
		expect(nodes.some((n) => n.type === 'n8n-nodes-base.stickyNote' && /Unknown Outcome/.test(String(n.parameters.content)))).toBe(true);
	});

	it('video-long-task-durable-wait: Generate without waiting → Wait (over 65 s: stored as waiting) → Check, Still Running looped back', () => {
		const workflow = examples.find((e) => e.file === 'video-long-task-durable-wait.json')!.workflow;
		const nodes = workflow.nodes as ExampleNode[];
		const byName = (name: string) => nodes.find((n) => n.name === name)!;
		expect(byName('Submit Video').parameters).toMatchObject({ operation: 'generate', waitForCompletion: false });
		const wait = byName('Wait 70 s');
		expect(wait.type).toBe('n8n-nodes-base.wait');
		// n8n's Wait node keeps waits under 65 s in memory (lost on a restart); longer ones go to the database.
		expect(wait.parameters).toMatchObject({ resume: 'timeInterval', unit: 'seconds' });
		expect(wait.parameters.amount as number).toBeGreaterThanOrEqual(65);
		expect(byName('Check Video').parameters).toMatchObject({ operation: 'check', taskId: '={{ $json.task_id }}', submittedAt: '={{ $json.submitted_at }}' });
		const targets = (from: string) =>
			(workflow.connections[from].main as Array<Array<{ node: string }>>).map((output) => output.map((c) => c.node));
		expect(targets('When clicking \'Execute workflow\'')).toEqual([['Submit Video']]);
		expect(targets('Submit Video')).toEqual([['Wait 70 s']]);
		expect(targets('Wait 70 s')).toEqual([['Check Video']]);
		// Output 0 (Done) ends the run with the video; output 1 (Still Running) goes round again.
		expect(targets('Check Video')).toEqual([[], ['Wait 70 s']]);
	});
});
