import { Credentials, getAdditionalKeys } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialsExpressionResolveValues,
	IExecuteData,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeParameters,
	INodeProperties,
	IRequestOptionsSimplified,
	IWorkflowDataProxyAdditionalKeys,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { ICredentialsHelper, NodeHelpers, UnexpectedError, Workflow, isExpression } from 'n8n-workflow';

import type { HarnessCredentialTypes } from './credential-types';
import type { HarnessNodeTypes } from './node-types';

/** The stored credentials of a run, by credential type name (plain data: the harness has no database). */
export type CredentialStore = Record<string, ICredentialDataDecryptedObject>;

/**
 * The credentials helper the engine calls for `getCredentials` and `httpRequestWithAuthentication`.
 * Mirrors n8n's CLI CredentialsHelper (packages/cli/src/credentials-helper.ts, n8n 1.123 and 2.41): generic
 * `authenticate` resolves `={{$credentials.x}}` through the workflow's expression engine, and
 * `getDecrypted` applies property defaults and resolves expressions in the stored data.
 */
export class HarnessCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly credentialTypes: HarnessCredentialTypes,
		private readonly nodeTypes: HarnessNodeTypes,
		private readonly store: CredentialStore,
	) {
		super();
	}

	getParentTypes(name: string): string[] {
		return this.credentialTypes.getParentTypes(name);
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		incomingRequestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow: Workflow,
		node: INode,
	): Promise<IHttpRequestOptions> {
		const requestOptions = incomingRequestOptions as IHttpRequestOptions;
		const { authenticate } = this.credentialTypes.getByName(typeName);
		if (!authenticate) return requestOptions;
		if (typeof authenticate === 'function') return await authenticate(credentials, requestOptions);

		requestOptions.headers ??= {};
		if (authenticate.type === 'generic') {
			for (const [outerKey, outerValue] of Object.entries(authenticate.properties)) {
				for (const [key, value] of Object.entries(outerValue as Record<string, string>)) {
					const keyResolved = this.resolveValue(key, { $credentials: credentials }, workflow, node);
					const valueResolved = this.resolveValue(value, { $credentials: credentials }, workflow, node);
					const target = requestOptions as unknown as Record<string, Record<string, unknown>>;
					target[outerKey] ??= {};
					target[outerKey][keyResolved] = valueResolved;
				}
			}
		}
		return requestOptions;
	}

	/** Our credentials have no expirable token to refresh. */
	async preAuthentication(
		_helpers: IHttpRequestHelper,
		_credentials: ICredentialDataDecryptedObject,
		_typeName: string,
		_node: INode,
		_credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	async runPreAuthentication(
		_helpers: IHttpRequestHelper,
		_credentials: ICredentialDataDecryptedObject,
		_typeName: string,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	/** n8n 2.x asks whether a node may use a credential type; the harness runs only nodes that declare theirs. */
	isCredentialUsableByNode(_credentialType: string, _nodeType: string): boolean {
		return true;
	}

	async getCredentials(nodeCredentials: INodeCredentialsDetails, type: string): Promise<Credentials> {
		const credentials = new Credentials({ id: nodeCredentials.id, name: nodeCredentials.name }, type);
		credentials.setData(this.storedData(type));
		return credentials;
	}

	async getDecrypted(
		additionalData: IWorkflowExecuteAdditionalData,
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		mode: WorkflowExecuteMode,
		executeData?: IExecuteData,
		raw?: boolean,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		const stored = this.storedData(type);
		if (raw === true) return stored;

		const withDefaults = NodeHelpers.getNodeParameters(
			this.getCredentialsProperties(type),
			stored as INodeParameters,
			true,
			false,
			null,
			null,
		) as ICredentialDataDecryptedObject;
		const additionalKeys = getAdditionalKeys(additionalData, mode, null);

		if (expressionResolveValues) {
			const { workflow, runExecutionData, runIndex, itemIndex, node, connectionInputData } = expressionResolveValues;
			try {
				return workflow.expression.getParameterValue(
					withDefaults as INodeParameters,
					runExecutionData,
					runIndex,
					itemIndex,
					node.name,
					connectionInputData,
					mode,
					additionalKeys,
					executeData,
					false,
					withDefaults,
				) as ICredentialDataDecryptedObject;
			} catch (error) {
				(error as Error).message += ' [Error resolving credentials]';
				throw error;
			}
		}
		const mockNode: INode = { id: 'mock', name: '', typeVersion: 1, type: 'harness.noOp', position: [0, 0], parameters: {} };
		const workflow = new Workflow({ nodes: [mockNode], connections: {}, active: false, nodeTypes: this.nodeTypes });
		return workflow.expression.getComplexParameterValue(
			mockNode,
			withDefaults as INodeParameters,
			mode,
			additionalKeys,
			undefined,
			undefined,
			withDefaults,
		) as ICredentialDataDecryptedObject;
	}

	async updateCredentials(
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		this.store[type] = { ...data };
	}

	async updateCredentialsOauthTokenData(
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		this.store[type] = { ...this.store[type], oauthTokenData: data.oauthTokenData };
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		const credentialType = this.credentialTypes.getByName(type);
		if (!credentialType.extends) return credentialType.properties;
		const combined: INodeProperties[] = [];
		for (const parent of credentialType.extends) {
			NodeHelpers.mergeNodeProperties(combined, this.getCredentialsProperties(parent));
		}
		NodeHelpers.mergeNodeProperties(combined, credentialType.properties);
		return combined;
	}

	private storedData(type: string): ICredentialDataDecryptedObject {
		const data = this.store[type];
		if (!data) throw new UnexpectedError(`No credentials of type "${type}" were given to the harness`);
		return { ...data };
	}

	/** Resolves `value` when it is an expression, as n8n does for generic authentication. */
	private resolveValue(
		value: string,
		additionalKeys: IWorkflowDataProxyAdditionalKeys,
		workflow: Workflow,
		node: INode,
	): string {
		if (!isExpression(value)) return value;
		const resolved = workflow.expression.getSimpleParameterValue(node, value, 'internal', additionalKeys, undefined, '');
		return resolved ? resolved.toString() : '';
	}
}
