// A certificate authority made by the test for the test: a CA and one server certificate it signs (openssl, EC P-256,
// valid two days), so a loopback server can answer HTTPS under a name and clients trust it only through the CA file
// the test hands them (NODE_EXTRA_CA_CERTS for Node, `cafile` for npm). Nothing is added to the machine's trust store.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export interface TestCa {
	/** The CA certificate (PEM) and its file. */
	caPem: string;
	caFile: string;
	/** The server's private key and certificate (PEM), signed by the CA. */
	keyPem: string;
	certPem: string;
}

export interface ServerIdentity {
	/** DNS names the certificate is valid for (subjectAltName). */
	dnsNames: string[];
	/** IP addresses it is valid for (e.g. 127.0.0.1, for clients that name the loopback address itself). */
	ipAddresses?: string[];
}

/** Makes a CA and a server certificate for `identity` in `dir` (created if missing). About 50 ms. */
export function createTestCa(dir: string, identity: ServerIdentity): TestCa {
	fs.mkdirSync(dir, { recursive: true });
	const file = (name: string) => path.join(dir, name);
	const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
	const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

	openssl([
		'req', '-x509', ...ecKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2',
		'-subj', '/CN=n8n-nodes-gen-gateway e2e test CA',
		'-addext', 'basicConstraints=critical,CA:TRUE',
		'-addext', 'keyUsage=critical,keyCertSign,cRLSign',
	]);
	openssl(['req', ...ecKey, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', `/CN=${identity.dnsNames[0]}`]);
	const altNames = [...identity.dnsNames.map((name) => `DNS:${name}`), ...(identity.ipAddresses ?? []).map((ip) => `IP:${ip}`)];
	fs.writeFileSync(
		file('server.ext'),
		[`subjectAltName=${altNames.join(',')}`, 'basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', ''].join('\n'),
	);
	openssl([
		'x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
		'-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'),
	]);
	fs.rmSync(file('ca.key')); // nothing else is ever signed with it
	return {
		caPem: fs.readFileSync(file('ca.pem'), 'utf8'),
		caFile: file('ca.pem'),
		keyPem: fs.readFileSync(file('server.key'), 'utf8'),
		certPem: fs.readFileSync(file('server.pem'), 'utf8'),
	};
}
