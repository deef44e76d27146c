import type {
	IAuthenticateGeneric,
	IAuthenticateRuleResponseCode,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/** What the credential test says when the service refuses the key, the same for 401 and 403. */
function refusedKeyRule(status: 401 | 403): IAuthenticateRuleResponseCode {
	return {
		type: 'responseCode',
		properties: {
			value: status,
			message:
				`The service refused this key (${status}): check that the API key is right and may use this service's endpoints`,
		},
	};
}

/**
 * What the credential test says when the base URL redirects: n8n's Test follows no redirect here (its helper would
 * carry the key to a sub-domain, or re-add it on any other host), so the key never leaves the base URL's origin.
 * n8n's rule messages are fixed text, so it cannot name the target; the nodes' errors do (transport/redirects.ts).
 */
function redirectRule(status: 301 | 302 | 303 | 307 | 308): IAuthenticateRuleResponseCode {
	return {
		type: 'responseCode',
		properties: {
			value: status,
			message:
				`The Base URL redirects (${status}) instead of answering GET /v1/models, and the API key is never sent on to ` +
				'another address. Enter the address the service answers at as the Base URL: often https:// instead of ' +
				"http://, or another host name. The Models node's error names where it redirects.",
		},
	};
}

/** Base URL + Bearer key. Tested with the free `GET /v1/models`, which reads only and submits nothing. */
export class GenGatewayApi implements ICredentialType {
	name = 'genGatewayApi';

	displayName = 'Gen Gateway API';

	icon: Icon = {
		light: 'file:../nodes/shared/genGateway.svg',
		dark: 'file:../nodes/shared/genGateway.dark.svg',
	};

	documentationUrl = 'https://github.com/gen-gateway/n8n-nodes-gen-gateway#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com',
			description:
				'Root address of the service, without /v1 (a trailing slash or /v1 is tolerated). For the bundled mock service, ' +
					'use the URL that "npm run mock" prints.',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'Sent as "Authorization: Bearer <key>". Never shown in outputs, errors or logs.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			// The same URL as the nodes build (nodes/shared/transport/baseUrl.ts normaliseBaseUrl): trimmed, no
			// trailing slash, no /v1 in any case (test/unit/credential.url.test.ts holds them together).
			baseURL: '={{String($credentials.baseUrl).trim().replace(/\\/+$/, "").replace(/\\/v1$/i, "")}}',
			url: '/v1/models',
			method: 'GET',
			// Not followed: a redirect would take the key with it (n8n adds it back on every hop; see redirectRule).
			disableFollowRedirect: true,
		},
		// n8n's credential test shows only its own text for an error status (n8n 2.x: the rule's message for that status;
		// 1.x its generic hint); say what the status means here. The nodes show the service's own message; a credential
		// test cannot (README "Credentials"). 401 (new-api: wrong or missing key) and 403 (a key the service knows but
		// refuses, or a banned user, IP or group) are both a refused key, and say so alike.
		rules: [
			refusedKeyRule(401),
			refusedKeyRule(403),
			...([301, 302, 303, 307, 308] as const).map(redirectRule),
		],
	};
}
