/**
 * The model pickers (Chat, Chat Model, Image) over a list that says which endpoints each model serves, as new-api's
 * GET /v1/models does (`supported_endpoint_types`, its constant/endpoint_type.go names), sent by a loopback server of
 * this test's own and read through n8n-core's LoadOptionsContext.
 */
import type { INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import { setupCoreServices } from '../harness/services';
import { loadOptionsContext, pickerIds } from '../support/loadOptions';
import { sendJson, startScriptedServer } from '../support/scriptedServer';
import type { ScriptedServer } from '../support/scriptedServer';

const KEY = 'picker-key-5c1e';
const model = (id: string, types?: unknown) => ({
	id,
	object: 'model',
	created: 1_626_777_600,
	owned_by: 'custom',
	...(types === undefined ? {} : { supported_endpoint_types: types }),
});

/** What new-api lists for models of different channels (common/endpoint_type.go), plus lists that say nothing. */
const LISTED = [
	model('gpt-4o', ['openai', 'openai-response']),
	model('o3-pro', ['openai-response']), // a Responses-only model
	model('claude-x', ['anthropic', 'openai']),
	model('gemini-x', ['gemini']),
	model('dall-e-3', ['image-generation', 'openai', 'openai-response']), // an image model keeps its channel's types
	model('flux-1', ['image-generation']),
	model('text-embedding-3', ['embeddings']),
	model('rerank-v2', ['jina-rerank']),
	model('sora-2', ['openai-video']),
	model('gpt-5-openai-compact', ['openai-response-compact']),
	model('legacy', []),
	model('nulled', null),
	model('bare'),
];

let server: ScriptedServer;
let list: unknown[] = LISTED;
beforeAll(async () => {
	setupCoreServices();
	server = await startScriptedServer((req, res) => {
		if (req.method === 'GET' && req.path === '/v1/models' && req.headers.authorization === `Bearer ${KEY}`) {
			return sendJson(res, 200, { success: true, data: list, object: 'list' });
		}
		sendJson(res, 401, { error: { message: 'Invalid token', type: 'new_api_error', code: '' } });
	});
});
afterAll(async () => await server?.close());
beforeEach(() => {
	list = LISTED;
	server.requests.length = 0;
});

const chat = new GenGatewayChat();
const chatModel = new GenGatewayChatModel();
const image = new GenGatewayImage();
const ids = async (type: string, nodeType: INodeType, filter?: string) =>
	await pickerIds(nodeType, loadOptionsContext(type, server.url, KEY), filter);

test('Chat: chat completions or responses first, then an image model that also chats, then the unknown', async () => {
	expect(await ids('genGatewayChat', chat)).toEqual([
		'claude-x', 'gpt-4o', 'o3-pro',
		'dall-e-3',
		'bare', 'flux-1', 'gemini-x', 'legacy', 'nulled',
	]);
	// Embeddings, rerank, video and compaction models are not offered; one GET per search, with the key.
	expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);
});

test('Chat Model: chat completions first; a Responses-only model goes with the unknown', async () => {
	expect(await ids('genGatewayChatModel', chatModel)).toEqual([
		'claude-x', 'gpt-4o',
		'dall-e-3',
		'bare', 'flux-1', 'gemini-x', 'legacy', 'nulled', 'o3-pro',
	]);
});

test('Image: image generation first (also when the model lists chat too), every other text model after', async () => {
	expect(await ids('genGatewayImage', image)).toEqual([
		'dall-e-3', 'flux-1',
		'bare', 'claude-x', 'gemini-x', 'gpt-4o', 'legacy', 'nulled', 'o3-pro',
	]);
});

test('the search text filters as before, then the models that fit come first', async () => {
	const withE = ['dall-e-3', 'bare', 'claude-x', 'gemini-x', 'legacy', 'nulled'];
	expect(await ids('genGatewayImage', image, 'E')).toEqual(withE);
	expect(await ids('genGatewayChat', chat, 'gpt')).toEqual(['gpt-4o']);
});

test('a list without supported_endpoint_types gives every model by name, in every picker, as before', async () => {
	list = LISTED.map(({ id }) => model(id));
	const everything = LISTED.map(({ id }) => id).sort((a, b) => a.localeCompare(b));
	const pickers = [['genGatewayChat', chat], ['genGatewayChatModel', chatModel], ['genGatewayImage', image]] as const;
	for (const [type, nodeType] of pickers) expect(await ids(type, nodeType)).toEqual(everything);
});
