import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	IExecuteFunctions,
	ILoadOptionsFunctions,
} from 'n8n-workflow';

/** What reads the credential: a node run's context, or the editor loading options (transport's GatewayFunctions). */
type CredentialReader = Pick<IExecuteFunctions | ILoadOptionsFunctions, 'getCredentials' | 'getNode'>;

export const CREDENTIAL_TYPE = 'genGatewayApi';

/**
 * The credential, read once per node run (per n8n context object) and used for everything of that run: the base URL,
 * the key n8n's `httpRequestWithAuthentication` sends (it is handed this same copy, so it reads nothing itself) and the
 * key's variants that redaction masks. One read instead of three per request: each is a database query in n8n (about
 * three transactions on PostgreSQL, measured in bench:scale's queue case), and every request of the run then uses one
 * version of the credential: the URL it goes to, the key it carries and the key masked in what comes back always
 * belong together. An edit to the credential takes effect at the node's next run. A failed read is not kept.
 */
const reads = new WeakMap<object, Promise<ICredentialDataDecryptedObject>>();

export async function credentialsOf(ctx: CredentialReader): Promise<ICredentialDataDecryptedObject> {
	let read = reads.get(ctx);
	if (!read) {
		read = ctx.getCredentials(CREDENTIAL_TYPE);
		reads.set(ctx, read);
		read.catch(() => reads.delete(ctx));
	}
	return await read;
}

/** What `httpRequestWithAuthentication` takes as `credentialsDecrypted`: the run's copy, with the node's id and name. */
export async function decryptedCredentials(ctx: CredentialReader): Promise<ICredentialsDecrypted> {
	const selected = ctx.getNode().credentials?.[CREDENTIAL_TYPE];
	return {
		id: selected?.id ?? '',
		name: selected?.name ?? '',
		type: CREDENTIAL_TYPE,
		data: await credentialsOf(ctx),
	};
}
