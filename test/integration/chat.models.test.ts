/**
 * The "Model" resource locator of the Chat and Image nodes: its "From list" mode is fed by the live GET /v1/models,
 * searched through n8n-core's real LoadOptionsContext (what the editor calls), over loopback to the mock; in its
 * new-api personality the list says which endpoints each model serves, and each picker puts the models that fit first.
 */
import type { INodeListSearchResult, INodeProperties, INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayChatModel } from '../../nodes/GenGatewayChatModel/GenGatewayChatModel.node';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import { VIDEO_MODEL_IDS } from '../../nodes/GenGatewayVideo/model/matrix';
import { setupCoreServices } from '../harness/services';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { loadOptionsContext as contextFor, pickerIds } from '../support/loadOptions';

let mock: MockClient;
beforeAll(async () => {
	setupCoreServices();
	mock = await spawnMockProcess();
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const loadOptionsContext = (type: string, apiKey = mock.apiKey) => contextFor(type, mock.url, apiKey);

function locatorOf(nodeType: INodeType): INodeProperties {
	return nodeType.description.properties.find((p) => p.name === 'model' && p.type === 'resourceLocator')!;
}

describe.each<[string, INodeType]>([
	['genGatewayChat', new GenGatewayChat()],
	['genGatewayImage', new GenGatewayImage()],
])('%s model locator', (type, nodeType) => {
	it('offers "From list" (searchable, wired to an existing list-search method) and "By ID"', () => {
		const locator = locatorOf(nodeType);
		expect(locator.default).toEqual({ mode: 'list', value: '' });
		expect(locator.modes!.map((mode) => [mode.name, mode.type])).toEqual([
			['list', 'list'],
			['id', 'string'],
		]);
		const method = locator.modes![0].typeOptions!.searchListMethod!;
		expect(locator.modes![0].typeOptions!.searchable).toBe(true);
		expect(typeof (nodeType.methods!.listSearch as Record<string, unknown>)[method]).toBe('function');
		expect(nodeType.description.usableAsTool).toBe(true);
	});

	it('lists the live models, sorted, and filters them by the search text', async () => {
		const search = nodeType.methods!.listSearch!.searchModels;
		const all = (await search.call(loadOptionsContext(type))) as INodeListSearchResult;
		const names = all.results.map((r) => r.name);
		expect(names).toEqual(expect.arrayContaining(['gpt-4o-mini', 'gk-chat-1', 'img-1', 'img-1-hd', 'sd_2.0_discount']));
		expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
		expect(all.results.every((r) => r.value === r.name)).toBe(true);

		const filtered = (await search.call(loadOptionsContext(type), 'IMG-1')) as INodeListSearchResult;
		expect(filtered.results.map((r) => r.value)).toEqual(['img-1', 'img-1-hd']);
		const log = await mock.log();
		expect(log.map((entry) => `${entry.method} ${entry.path} ${entry.authorized}`)).toEqual([
			'GET /v1/models true',
			'GET /v1/models true',
		]);
	});

	it('reports a wrong key with the 403 message, not an empty list', async () => {
		const search = nodeType.methods!.listSearch!.searchModels;
		await expect(search.call(loadOptionsContext(type, 'wrong-key-list-123'))).rejects.toThrow(/403: invalid or missing API key/);
	});
});

const PICKERS: [string, INodeType][] = [
	['genGatewayChat', new GenGatewayChat()],
	['genGatewayChatModel', new GenGatewayChatModel()],
	['genGatewayImage', new GenGatewayImage()],
];
const byName = (ids: readonly string[]) => [...ids].sort((a, b) => a.localeCompare(b));

test('without supported_endpoint_types (default mock), every picker lists every model by name, as before', async () => {
	const everything = byName(['gpt-4o-mini', 'gk-chat-1', 'img-1', 'img-1-hd', ...VIDEO_MODEL_IDS]);
	for (const [type, nodeType] of PICKERS) {
		expect(await pickerIds(nodeType, loadOptionsContext(type))).toEqual(everything);
	}
});

describe('against the mock in its new-api personality (supported_endpoint_types per model)', () => {
	let newApi: MockClient;
	beforeAll(async () => {
		newApi = await spawnMockProcess({ personality: 'new-api' });
	});
	afterAll(async () => await newApi?.stop());

	it.each<[string, INodeType, string[]]>([
		// Chat models (openai) first, image models after, video models (openai-video) left out.
		['genGatewayChat', new GenGatewayChat(), ['gk-chat-1', 'gpt-4o-mini', 'img-1', 'img-1-hd']],
		['genGatewayChatModel', new GenGatewayChatModel(), ['gk-chat-1', 'gpt-4o-mini', 'img-1', 'img-1-hd']],
		['genGatewayImage', new GenGatewayImage(), ['img-1', 'img-1-hd', 'gk-chat-1', 'gpt-4o-mini']],
	])('%s lists the models that fit first', async (type, nodeType, expected) => {
		const ctx = contextFor(type, newApi.url, newApi.apiKey);
		expect(await pickerIds(nodeType, ctx)).toEqual(expected);
		expect(await pickerIds(nodeType, ctx, 'G')).toEqual(expected.filter((id) => id.includes('g')));
	});
});
