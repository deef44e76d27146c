/**
 * Issue 37 point 13 through n8n's engine: a frame from a binary field goes to the service as a signed n8n URL, which
 * the harness's n8n issues at http://127.0.0.1:5678 (loopback). A service on a loopback or private host gets it, with
 * a warning in the editor (one execution hint per node run, however many items) that it may hand the URL on to a
 * provider that cannot reach it; a public service is refused it before any POST. Both name the variable that sets
 * n8n's public URL on the running line: N8N_WEBHOOK_URL on n8n 2.x (the harness's n8n-core 2.41.1 as is), WEBHOOK_URL
 * on 1.x (the same context without `helpers.getSecureEgressFilter`, which n8n 1.x does not have).
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType, NodeExecutionHint } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';
import { runWorkflow } from '../harness/engine';
import type { RunResult } from '../harness/engine';
import { generateParams } from '../support/faultTable';
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';

jest.setTimeout(30_000);

const API_KEY = 'sentinel-key-hand-on-warning-9b1f';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(600, 7)]);

/** Two items, each with a PNG in binary field `data`. */
const pngSource: INodeType = {
	description: {
		...{ displayName: 'PNG Source', name: 'handOnPngSource', defaults: { name: 'PNG Source' } },
		...{ group: ['transform'], version: 1, description: 'Test: two items with a PNG' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	},
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items: INodeExecutionData[] = [];
		for (const item of [0, 1]) {
			const data = await this.helpers.prepareBinaryData(PNG, `frame${item}.png`, 'image/png');
			items.push({ json: {}, binary: { data }, pairedItem: { item: 0 } });
		}
		return [items];
	},
};

type Line = '2.x' | '1.x';
const VARIABLE: Record<Line, string> = { '2.x': 'N8N_WEBHOOK_URL', '1.x': 'WEBHOOK_URL' };
/** Whether the engine handed the Video node the 2.x helper, seen from inside the node run. */
const egressHelperSeen: Partial<Record<Line, boolean>> = {};

/** The Video node as it is; on "1.x" its context without getSecureEgressFilter, as n8n 1.x builds it. */
function videoOn(line: Line): INodeType {
	const video = new GenGatewayVideo();
	return {
		description: { ...video.description, name: `videoHandOn_${line.replace('.', '')}` },
		methods: (video as INodeType).methods,
		async execute(this: IExecuteFunctions) {
			const helpers = this.helpers as unknown as IDataObject;
			if (line === '1.x') delete helpers.getSecureEgressFilter;
			egressHelperSeen[line] = typeof helpers.getSecureEgressFilter === 'function';
			return await video.execute.call(this);
		},
	};
}

async function run(baseUrl: string, line: Line): Promise<RunResult> {
	return await runWorkflow({
		binaryMode: 'filesystem',
		nodes: [
			{ name: 'Source', type: 'handOnPngSource', parameters: {} },
			{
				name: 'Video',
				type: `videoHandOn_${line.replace('.', '')}`,
				parameters: generateParams('a fox', {
					model: 'sd_2.0_fast_special',
					waitForCompletion: false,
					firstImageSource: 'binary',
				}),
				credentials: true,
			},
		],
		extraNodeTypes: [pngSource, videoOn('2.x'), videoOn('1.x')],
		credentials: { baseUrl, apiKey: API_KEY },
	});
}

const hintsOf = (result: RunResult): NodeExecutionHint[] => result.run.data.resultData.runData.Video?.[0]?.hints ?? [];

describe('a binary frame for a service on a loopback host, n8n on loopback', () => {
	it.each<Line>(['2.x', '1.x'])(
		'n8n %s: both items are sent, with one warning hint naming the line\'s variable and the origins only',
		async (line) => {
			const server = await startScriptedServer((_req, res) => sendJson(res, 200, { task_id: 'task_1', status: 'SUBMITTED' }));
			try {
				const result = await run(server.url, line);
				expect(egressHelperSeen[line]).toBe(line === '2.x');
				expect(result.nodeError('Video')).toBeUndefined();
				expect(postsTo(server, '/v1/tasks/vendor')).toHaveLength(2);
				const sent = JSON.parse(postsTo(server, '/v1/tasks/vendor')[0].body) as IDataObject;
				expect(JSON.stringify(sent)).toContain('http://127.0.0.1:5678/rest/binary-data/signed?token=');
				expect(result.output('Video')).toHaveLength(2);

				const hints = hintsOf(result);
				expect(hints).toHaveLength(1);
				expect(hints[0]).toMatchObject({ type: 'warning', location: 'outputPane' });
				const { message } = hints[0];
				for (const item of result.output('Video')) expect(item.json.warnings).toEqual([message]);
				expect(message).toContain('n8n URLs at http://127.0.0.1:5678 (a loopback address)');
				expect(message).toContain(`the service at ${server.url} is on a loopback host`);
				expect(message).toContain(`set ${VARIABLE[line]} to n8n's public URL`);
				if (line === '1.x') expect(message).not.toContain('N8N_WEBHOOK_URL');
				expect(message).not.toContain('token');
			} finally {
				await server.close();
			}
		},
	);
});

describe('a binary frame for a service on a public host, n8n on loopback', () => {
	it("is refused before any POST on both lines, naming the running line's variable", async () => {
		for (const line of ['2.x', '1.x'] as const) {
			const result = await run('https://api.example.com/v1', line);
			expect(egressHelperSeen[line]).toBe(line === '2.x');
			const error = result.nodeError('Video') as Error & { description?: string };
			expect(error.message).toBe(
				'firstImage: the service cannot fetch binary field "data": n8n would serve it at http://127.0.0.1:5678 (a ' +
					'loopback address), which the service at https://api.example.com (a public host) cannot reach; set ' +
					`${VARIABLE[line]} to n8n's public URL`,
			);
			expect(error.description).toContain(`Set ${VARIABLE[line]} to an address the service at https://api.example.com`);
			expect(hintsOf(result)).toEqual([]);
		}
	});
});
