/** Which network failures are TLS handshakes (nothing sent) and which are not (the request may have gone out). */
import { errorTexts, isTlsHandshakeFailure } from '../../nodes/shared/transport/tls';

describe('isTlsHandshakeFailure', () => {
	it.each(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'])(
		'a refused certificate (%s) is one',
		(code) => expect(isTlsHandshakeFailure(code, [])).toBe(true),
	);

	it('https:// at a plain-HTTP server (EPROTO, "wrong version number", as Node 20 reports it) is one', () => {
		const error = new Error('write EPROTO 808C:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../ssl3_record.c:350:');
		expect(isTlsHandshakeFailure('EPROTO', errorTexts(error))).toBe(true);
		// n8n may put the original text in `cause`, `description` or `messages`.
		expect(isTlsHandshakeFailure('EPROTO', errorTexts({ message: 'The connection was aborted', cause: error }))).toBe(true);
		expect(isTlsHandshakeFailure('EPROTO', errorTexts({ message: 'x', messages: [error.message] }))).toBe(true);
		expect(isTlsHandshakeFailure('ERR_SSL_WRONG_VERSION_NUMBER', [])).toBe(true);
	});

	it('a record error after the handshake is not (the request may have been sent), nor are other codes', () => {
		expect(isTlsHandshakeFailure('EPROTO', ['read EPROTO error:0A000119:SSL routines:ssl3_get_record:decryption failed or bad record mac'])).toBe(false);
		expect(isTlsHandshakeFailure('ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC', [])).toBe(false);
		expect(isTlsHandshakeFailure('EPROTO', [])).toBe(false);
		expect(isTlsHandshakeFailure('ECONNRESET', ['certificate'])).toBe(false);
	});
});
