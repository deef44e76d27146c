/**
 * The "Model" resource locator of the Chat and Image nodes: its "From list" mode is fed by the live GET /v1/models,
 * searched through n8n-core's real LoadOptionsContext (what the editor calls), over loopback to the mock.
 */
import { LoadOptionsContext } from 'n8n-core';
import type { ILoadOptionsFunctions, INode, INodeListSearchResult, INodeProperties, INodeType, IWorkflowExecuteAdditionalData } from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import { HarnessCredentialTypes } from '../harness/credential-types';
import { HarnessCredentialsHelper } from '../harness/credentials-helper';
import { buildNodeTypes } from '../harness/node-types';
import { setupCoreServices } from '../harness/services';
import { CREDENTIAL_REF, CREDENTIAL_TYPE } from '../harness/workflow-builder';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';

let mock: MockClient;
beforeAll(async () => {
	setupCoreServices();
	mock = await spawnMockProcess();
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

/** A load-options context for a node of `type`, with the credential pointing at the mock. */
function loadOptionsContext(type: string, apiKey = mock.apiKey): ILoadOptionsFunctions {
	const nodeTypes = buildNodeTypes();
	const node: INode = {
		id: 'n1',
		name: 'Node',
		type: nodeTypes.fullType(type),
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { [CREDENTIAL_TYPE]: { ...CREDENTIAL_REF } },
	};
	const workflow = new Workflow({ id: 'w1', nodes: [node], connections: {}, active: false, nodeTypes });
	const credentialsHelper = new HarnessCredentialsHelper(new HarnessCredentialTypes(), nodeTypes, {
		[CREDENTIAL_TYPE]: { baseUrl: mock.url, apiKey },
	});
	const additionalData = { credentialsHelper, currentNodeParameters: {} } as unknown as IWorkflowExecuteAdditionalData;
	return new LoadOptionsContext(workflow, node, additionalData, 'model');
}

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
