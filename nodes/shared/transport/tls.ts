import { NodeApiError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { OUTCOME_UNKNOWN } from './errors';

/**
 * A TLS handshake that failed (an untrusted certificate, https:// aimed at a plain-HTTP server) proves that no request
 * was sent: Node writes the request only once the handshake succeeded and the certificate was accepted. So such a
 * failure is never an unknown outcome, and retrying it cannot help (the same certificate fails the same way).
 */

/** Node's codes for a certificate it refused (its TLS docs, "X509 certificate error codes"), and a name mismatch. */
const CERTIFICATE_CODES = new Set([
	'UNABLE_TO_GET_ISSUER_CERT',
	'UNABLE_TO_GET_CRL',
	'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
	'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
	'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
	'CERT_SIGNATURE_FAILURE',
	'CRL_SIGNATURE_FAILURE',
	'CERT_NOT_YET_VALID',
	'CERT_HAS_EXPIRED',
	'CRL_NOT_YET_VALID',
	'CRL_HAS_EXPIRED',
	'ERROR_IN_CERT_NOT_BEFORE_FIELD',
	'ERROR_IN_CERT_NOT_AFTER_FIELD',
	'ERROR_IN_CRL_LAST_UPDATE_FIELD',
	'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
	'DEPTH_ZERO_SELF_SIGNED_CERT',
	'SELF_SIGNED_CERT_IN_CHAIN',
	'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
	'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
	'CERT_CHAIN_TOO_LONG',
	'CERT_REVOKED',
	'INVALID_CA',
	'PATH_LENGTH_EXCEEDED',
	'INVALID_PURPOSE',
	'CERT_UNTRUSTED',
	'CERT_REJECTED',
	'HOSTNAME_MISMATCH',
	'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * OpenSSL's reasons that only a handshake gives. EPROTO and ERR_SSL_* alone are not enough: a record error after
 * the handshake (a bad MAC, a cut) can come after the request went out, and then the outcome is unknown.
 */
const HANDSHAKE_REASON = new RegExp(
	[
		'wrong version number',
		'packet length too long',
		'unknown protocol',
		'unsupported protocol',
		'no protocols available',
		'handshake failure',
		'protocol version',
		'certificate',
	].join('|'),
	'i',
);

/** The texts an error from n8n may carry the OpenSSL reason in (n8n's wrapping moves it between these). */
export function errorTexts(error: unknown): string[] {
	const texts: string[] = [];
	for (const candidate of [error, (error as { cause?: unknown } | undefined)?.cause]) {
		const record = candidate as { message?: unknown; description?: unknown; messages?: unknown } | undefined;
		for (const value of [record?.message, record?.description]) if (typeof value === 'string') texts.push(value);
		const messages: unknown[] = Array.isArray(record?.messages) ? record.messages : [];
		texts.push(...messages.filter((m): m is string => typeof m === 'string'));
	}
	return texts;
}

export function isTlsHandshakeFailure(code: string, texts: readonly string[]): boolean {
	if (CERTIFICATE_CODES.has(code)) return true;
	if (code !== 'EPROTO' && !code.startsWith('ERR_SSL_')) return false;
	return HANDSHAKE_REASON.test(code.replace(/_/g, ' ')) || texts.some((text) => HANDSHAKE_REASON.test(text));
}

export function tlsError(
	node: INode,
	input: { code: string; method: string; path: string; itemIndex?: number },
): NodeApiError {
	const message = `${input.method} ${input.path} failed: could not reach the service: TLS / certificate problem ` +
		`(${input.code}), check the URL scheme and certificate.`;
	const description =
		"The secure connection failed before the request was sent, so nothing was sent (nor charged) and it was not " +
			"retried. If the service speaks plain HTTP, the credential's base URL must start with http://; if its " +
			"certificate is self-signed or from a private CA, n8n must be made to trust it (NODE_EXTRA_CA_CERTS); an expired " +
			"certificate or one issued for another name must be fixed on the service.";
	const error = new NodeApiError(node, { message }, { message, description, itemIndex: input.itemIndex });
	// NodeApiError swaps a message naming a network code for its generic text; ours says what to check.
	error.message = message;
	error.context[OUTCOME_UNKNOWN] = false;
	error.context.networkCode = input.code;
	return error;
}
