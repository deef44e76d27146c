/**
 * The credential's Test requests the URL the nodes use: its baseURL expression, evaluated by n8n-workflow's own
 * expression engine (2.41.0 and 1.120.31) with `$credentials` as n8n's credential test supplies it, joined to
 * `/v1/models` the way axios joins baseURL and url, equals nodes/shared/transport/baseUrl.ts `joinUrl(baseUrl, '/v1/models')`.
 */
import type { INode, INodeType, INodeTypes } from 'n8n-workflow';

import { GenGatewayApi } from '../../credentials/GenGatewayApi.credentials';
import { joinUrl } from '../../nodes/shared/transport/baseUrl';

const LINES: Array<[string, typeof import('n8n-workflow')]> = [
	['2.41.0', require('n8n-workflow')],
	['1.120.31', require('n8n-workflow-v1')],
];

const node: INode = { id: '1', name: 'Test', type: 'test', typeVersion: 1, position: [0, 0], parameters: {} };
const nodeType = { description: { properties: [] } } as unknown as INodeType;
const nodeTypes = {
	getByName: () => nodeType,
	getByNameAndVersion: () => nodeType,
	getKnownTypes: () => ({}),
} as unknown as INodeTypes;

/** axios's combineURLs: what the credential test's request becomes. */
const combine = (baseURL: string, url: string) => `${baseURL.replace(/\/?\/$/, '')}/${url.replace(/^\/+/, '')}`;

const BASE_URLS = [
	'https://h',
	'https://h/',
	'https://h/v1',
	'https://h/v1/',
	'https://h/V1',
	'https://h/v1 ',
	' https://h/v1/ ',
	'https://h//',
	'https://h/api/v1',
	'http://127.0.0.1:8080/gateway',
];

describe.each(LINES)("the credential Test's URL on n8n-workflow %s", (_line, lib) => {
	const workflow = new lib.Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	const { baseURL, url } = new GenGatewayApi().test.request;

	it.each(BASE_URLS)('%j: the same URL as the nodes request', (baseUrl) => {
		const resolved = workflow.expression.getSimpleParameterValue(node, baseURL as string, 'internal', { $credentials: { baseUrl } }, undefined, '');
		expect(combine(String(resolved), url as string)).toBe(joinUrl(baseUrl, '/v1/models'));
	});
});

it('the nodes strip /v1 in any case, and spaces, too (what the Test now matches)', () => {
	expect(joinUrl('https://h/V1', '/v1/models')).toBe('https://h/v1/models');
	expect(joinUrl('https://h/v1 ', '/v1/models')).toBe('https://h/v1/models');
});
