/**
 * n8n's next engine plans to make `this.helpers.createBinarySignedUrl` throw (issue 37): a frame or reference from a
 * binary field then cannot be sent as a signed n8n URL. With the helper absent and with it throwing, the item fails
 * before anything is paid (zero POSTs), naming Source: URL as the way out. Through n8n's engine: the Video node is
 * run as is, its context's helpers changed just for the call.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';
import { runWorkflow } from '../harness/engine';
import { generateParams } from '../support/faultTable';
import { postsTo, sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';

jest.setTimeout(30_000);

const API_KEY = 'sentinel-key-signed-helper-5e7a';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(600, 7)]);

/** One item with a PNG in binary field `data`. */
const pngSource: INodeType = {
	description: {
		...{ displayName: 'PNG Source', name: 'signedHelperPngSource', defaults: { name: 'PNG Source' } },
		...{ group: ['transform'], version: 1, description: 'Test: one item with a PNG' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	},
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const data = await this.helpers.prepareBinaryData(PNG, 'frame.png', 'image/png');
		return [[{ json: {}, binary: { data }, pairedItem: { item: 0 } }]];
	},
};

type Helper = 'absent' | 'throws';

/** The Video node as it is, run with its context's createBinarySignedUrl taken away or made to throw. */
function videoWith(helper: Helper): INodeType {
	const video = new GenGatewayVideo();
	return {
		description: { ...video.description, name: `videoSignedHelper_${helper}` },
		methods: (video as INodeType).methods,
		async execute(this: IExecuteFunctions) {
			const helpers = this.helpers as unknown as IDataObject;
			if (helper === 'absent') delete helpers.createBinarySignedUrl;
			else {
				helpers.createBinarySignedUrl = () => {
					throw new Error('Signed binary URLs are not available in this execution mode');
				};
			}
			return await video.execute.call(this);
		},
	};
}

async function run(server: ScriptedServer, helper: Helper) {
	return await runWorkflow({
		binaryMode: 'filesystem',
		nodes: [
			{ name: 'Source', type: 'signedHelperPngSource', parameters: {} },
			{
				name: 'Video',
				type: `videoSignedHelper_${helper}`,
				parameters: generateParams('a fox', {
					model: 'sd_2.0_fast_special',
					waitForCompletion: false,
					firstImageSource: 'binary',
				}),
				credentials: true,
			},
		],
		extraNodeTypes: [pngSource, videoWith(helper)],
		credentials: { baseUrl: server.url, apiKey: API_KEY },
	});
}

describe('a binary source when n8n cannot sign a URL for it', () => {
	const HELPERS: Helper[] = ['absent', 'throws'];
	it.each(HELPERS)('helper %s: the item fails before any POST, naming Source: URL', async (helper) => {
		const server = await startScriptedServer((_req, res) =>
			sendJson(res, 200, { task_id: 'task_1', status: 'queued' }),
		);
		try {
			const result = await run(server, helper);
			const error = result.nodeError('Video') as Error & { description?: string };
			expect(error).toBeDefined();
			expect(error.message).toMatch(/firstImage: n8n cannot give the service a URL for binary field "data"/);
			expect(`${error.message} ${error.description}`).toMatch(/Source.{0,20}URL/);
			expect(error.description).toMatch(/Nothing was sent/);
			expect(server.requests.filter((request) => request.method === 'POST')).toHaveLength(0);
			expect(postsTo(server, '/v1/video/generations')).toHaveLength(0);
		} finally {
			await server.close();
		}
	});
});
