import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { warnOnce } from '../../shared/run/executionHints';
import { normaliseBaseUrl } from '../../shared/transport/baseUrl';
import { credentialsOf } from '../../shared/transport/credentials';
import type { CheckedBinary } from './binarySources';
import { BinarySourceProblem } from './binarySources';
import { webhookUrlSources, webhookUrlVariable } from './publicUrl';
import { handOnWarning, originOf, unreachableProblem } from './reachability';

/**
 * Checked binary data → signed n8n URLs the service fetches (`<n8n>/rest/binary-data/signed?token=<JWT>`, served
 * without login until the token expires), valid for the task's Max Wait and no longer; and what was issued, for the
 * item's JSON. Generate issues them right before each POST.
 */

/** One URL issued, as the item's JSON reports it (`binary_urls`). */
export interface IssuedUrl extends IDataObject {
	parameter: string;
	binary_field: string;
	file_name?: string;
	mime_type: string;
	bytes: number;
	url: string;
	expires_at: string;
}

/**
 * When a token signed at `issuedAt` for `seconds` expires: n8n's JWT counts from the whole second it was signed in
 * (`iat`), so this is its `exp`, or a second earlier should the clock tick between the two readings.
 */
const expiryOf = (seconds: number, issuedAt: number) =>
	new Date(Math.floor(issuedAt / 1000) * 1000 + seconds * 1000).toISOString();

/**
 * n8n's signed URL for one checked binary. n8n's next engine plans to make `createBinarySignedUrl` throw, and a host
 * may not offer it: then the binary cannot be sent, and the item fails here, before anything is paid, naming the URL
 * source as the way out.
 */
function signedUrlOf(ctx: IExecuteFunctions, entry: CheckedBinary, seconds: number): string {
	const sign = (ctx.helpers as Partial<IExecuteFunctions['helpers']>).createBinarySignedUrl;
	let why: string;
	if (typeof sign !== 'function') {
		why = 'this n8n offers no signed URLs for binary data (helpers.createBinarySignedUrl is missing)';
	} else {
		try {
			const url = sign.call(ctx.helpers, entry.served, `${seconds}s`) as unknown;
			if (typeof url === 'string' && url) return url;
			why = 'n8n returned no signed URL';
		} catch (error) {
			const said = error instanceof Error ? error.message : String(error);
			why = `n8n refused to sign one: ${said.slice(0, 300)}`;
		}
	}
	throw new BinarySourceProblem(
		`${entry.parameter}: n8n cannot give the service a URL for binary field "${entry.binaryField}" (${why}); ` +
			'set its Source to URL',
		'A file from a binary field is sent as a signed n8n URL the service fetches, and this n8n cannot sign one. ' +
			`Set "Source" of ${entry.parameter} to URL and give a public URL of the file (e.g. uploaded to storage the ` +
			'service can reach). Nothing was sent or paid.',
	);
}

/** A signed URL per checked binary, valid for `seconds`. */
export function issueSignedUrls(ctx: IExecuteFunctions, checked: CheckedBinary[], seconds: number): IssuedUrl[] {
	return checked.map((entry) => {
		const issuedAt = Date.now();
		const url = signedUrlOf(ctx, entry, seconds);
		return {
			parameter: entry.parameter,
			binary_field: entry.binaryField,
			...(entry.binary.fileName ? { file_name: entry.binary.fileName } : {}),
			mime_type: entry.mimeType,
			bytes: entry.bytes,
			url,
			expires_at: expiryOf(seconds, issuedAt),
		};
	});
}

/**
 * Refuses, before anything is paid, a signed URL the service cannot reach (reachability.ts): names both addresses
 * (origins only: the token is a secret of the URL) and the variable that sets n8n's public URL on the running line
 * (publicUrl.ts). A service on a loopback or private host handed a loopback or private URL goes on, with a warning:
 * shown once per node run in the editor (an execution hint) and returned, for the item's JSON (`warnings`).
 */
export async function checkReachable(ctx: IExecuteFunctions, issued: IssuedUrl[]): Promise<string[]> {
	if (issued.length === 0) return [];
	const serviceBaseUrl = normaliseBaseUrl((await credentialsOf(ctx)).baseUrl);
	const variable = webhookUrlVariable(ctx.helpers);
	const problem = unreachableProblem(serviceBaseUrl, issued[0].url);
	if (problem) {
		throw new BinarySourceProblem(
			`${issued[0].parameter}: the service cannot fetch binary field "${issued[0].binary_field}": ${problem}; set ` +
				`${variable} to n8n's public URL`,
			// n8n's createBinarySignedUrl builds on its webhook base URL (publicUrl.ts).
			`n8n builds the signed URL from its public webhook URL (${originOf(issued[0].url)} now): ` +
				`${webhookUrlSources(variable)} (N8N_EDITOR_BASE_URL does not change it). Set ${variable} to an address ` +
				`the service at ${originOf(serviceBaseUrl)} can reach and restart n8n, or give a URL instead of a binary ` +
				'field. Nothing was sent.',
		);
	}
	const warning = handOnWarning(serviceBaseUrl, issued[0].url, variable);
	if (!warning) return [];
	warnOnce(ctx, warning);
	return [warning];
}
