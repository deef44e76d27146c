import { LoadOptionsContext } from 'n8n-core';
import type {
	ILoadOptionsFunctions,
	INode,
	INodeListSearchResult,
	INodeType,
	IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { HarnessCredentialTypes } from '../harness/credential-types';
import { HarnessCredentialsHelper } from '../harness/credentials-helper';
import { buildNodeTypes } from '../harness/node-types';
import { CREDENTIAL_REF, CREDENTIAL_TYPE } from '../harness/workflow-builder';

/**
 * n8n-core's real LoadOptionsContext (what the editor's "From list" calls) for a node of `type`, its credential
 * pointing at `baseUrl`. Needs setupCoreServices() from test/harness/services first.
 */
export function loadOptionsContext(type: string, baseUrl: string, apiKey: string): ILoadOptionsFunctions {
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
		[CREDENTIAL_TYPE]: { baseUrl, apiKey },
	});
	const additionalData = { credentialsHelper, currentNodeParameters: {} } as unknown as IWorkflowExecuteAdditionalData;
	return new LoadOptionsContext(workflow, node, additionalData, 'model');
}

/** The ids a node's model picker offers for `filter`, in order. */
export async function pickerIds(nodeType: INodeType, ctx: ILoadOptionsFunctions, filter?: string): Promise<string[]> {
	const result = (await nodeType.methods!.listSearch!.searchModels.call(ctx, filter)) as INodeListSearchResult;
	expect(result.results.every((r) => r.name === r.value)).toBe(true);
	return result.results.map((r) => r.value as string);
}
