// n8n alone in a mount namespace of the test's own, where its default npm registry's name means loopback.
//
// n8n 2.41.1 installs community packages from its built-in default registry only: any other
// N8N_COMMUNITY_PACKAGES_REGISTRY throws FeatureNotLicensedError without an enterprise licence. So the test does not
// change n8n's registry; it changes what the registry's name resolves to, for n8n alone:
//   - `unshare --mount` (we are root) gives `n8n start` a mount namespace in which a hosts file of the test's own is
//     bind-mounted over /etc/hosts (the registry's host name → 127.0.0.1, where Verdaccio serves HTTPS on port 443),
//     and a resolv.conf naming a loopback DNS recorder, which answers every other name "no such name" and keeps the
//     list. So no name n8n or its npm looks up can reach anything beyond loopback, and the test can say which names
//     n8n tried (api.n8n.io's package check, for instance);
//   - the registry's address is read from n8n's own code at run time (its community-packages config default, checked
//     against the service's DEFAULT_REGISTRY, the address that needs no licence): no file of ours names it;
//   - the certificate comes from a CA the test made (testCa.ts), trusted through NODE_EXTRA_CA_CERTS by n8n's own
//     requests and by the npm it runs. npm honours NODE_EXTRA_CA_CERTS only when no `cafile`/`ca` is configured; this
//     machine's global npmrc names a cafile (the system bundle), so n8n's npm gets empty global and user npmrc files of
//     the test's own (what a plain user's machine has) and a cache of its own (the local registry's answers never land
//     in the machine's npm cache under the public registry's address).
// The rest of the machine (the test, Verdaccio, the mock, Chromium) keeps the real /etc/hosts.
import * as dgram from 'dgram';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import type { N8nInstall } from './install';

/** What n8n's own code says its default (licence-free) community-package registry is. */
export function defaultRegistryUrl(install: N8nInstall): string {
	const folder = path.join(install.dir, 'node_modules', 'n8n', 'dist', 'modules', 'community-packages');
	const service = fs.readFileSync(path.join(folder, 'community-packages.service.js'), 'utf8');
	const constant = /\bconst DEFAULT_REGISTRY = '([^']+)'/.exec(service)?.[1];
	if (!constant) throw new Error(`no DEFAULT_REGISTRY in ${folder}/community-packages.service.js: n8n changed its installer`);
	// The config's default, as n8n itself builds it (its DI container), with no registry set in the environment.
	const script = [
		`const { Container } = require(${JSON.stringify(path.join(install.dir, 'node_modules', '@n8n', 'di'))});`,
		`const { CommunityPackagesConfig } = require(${JSON.stringify(path.join(folder, 'community-packages.config.js'))});`,
		'process.stdout.write(Container.get(CommunityPackagesConfig).registry);',
	].join('\n');
	const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('N8N_')));
	const configured = execFileSync('node', ['-e', script], { env: { ...env, PATH: install.path }, encoding: 'utf8' }).trim();
	if (configured !== constant) {
		throw new Error(`n8n's community-packages config defaults to ${configured}, its service's licence-free registry is ${constant}`);
	}
	return constant;
}

export interface DnsRecorder {
	/** The loopback address it answers on (port 53). */
	address: string;
	/** Every name asked, in order (with repeats). */
	names(): string[];
	stop(): Promise<void>;
}

/**
 * A DNS server on a loopback address that answers every question "no such name" (NXDOMAIN) and records the names:
 * the namespace's resolver, so a name missing from its hosts file fails at once and never leaves loopback.
 */
export async function startDnsRecorder(): Promise<DnsRecorder> {
	const asked: string[] = [];
	for (let attempt = 0; ; attempt++) {
		// A random address in 127/8 (all loopback on Linux): port 53 there is free, unlike on 127.0.0.1 maybe.
		const address = `127.${53 + Math.floor(Math.random() * 150)}.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;
		const socket = dgram.createSocket('udp4');
		const bound = await new Promise<boolean>((resolve) => {
			socket.once('error', () => resolve(false));
			socket.bind(53, address, () => resolve(true));
		});
		if (!bound) {
			socket.close();
			if (attempt >= 5) throw new Error('no loopback address with a free port 53 for the DNS recorder');
			continue;
		}
		socket.on('message', (query, peer) => {
			const name = questionName(query);
			if (name === undefined) return;
			asked.push(name);
			socket.send(nxdomain(query), peer.port, peer.address);
		});
		return {
			address,
			names: () => [...asked],
			stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
		};
	}
}

/** The first question's name of a DNS query, or undefined when it is not one. */
function questionName(query: Buffer): string | undefined {
	if (query.length < 12 || query.readUInt16BE(4) < 1) return undefined;
	const labels: string[] = [];
	let offset = 12;
	while (offset < query.length) {
		const length = query[offset];
		if (length === 0) return labels.join('.');
		if (length > 63 || offset + 1 + length > query.length) return undefined;
		labels.push(query.subarray(offset + 1, offset + 1 + length).toString('latin1'));
		offset += 1 + length;
	}
	return undefined;
}

/** The query turned into its answer: same id and question, "response, recursion available, NXDOMAIN", no records. */
function nxdomain(query: Buffer): Buffer {
	let end = 12;
	while (end < query.length && query[end] !== 0) end += 1 + query[end];
	end += 5; // the terminating zero, QTYPE and QCLASS
	const answer = Buffer.from(query.subarray(0, Math.min(end, query.length)));
	answer.writeUInt16BE(0x8180 | (query.readUInt16BE(2) & 0x0100) | 3, 2); // QR, opcode 0, RD copied, RA, rcode 3
	answer.writeUInt16BE(1, 4);
	answer.writeUInt32BE(0, 6); // ANCOUNT, NSCOUNT
	answer.writeUInt16BE(0, 10); // ARCOUNT
	return answer;
}

export interface RegistryNamespace {
	/** The folder holding the namespace's hosts, resolv.conf, npmrc files and npm cache. */
	dir: string;
	/** The registry's host name, as n8n's code names it. */
	registryHost: string;
	/** The command that runs `command args` inside the namespace (for a spawn). */
	wrap(command: string, args: string[]): { command: string; args: string[] };
	/**
	 * The environment n8n runs with inside it: `env` without any npm_* variable (what `npm test` exports, including
	 * the machine's global and user npmrc), plus the CA and npm's own config and cache.
	 */
	env(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

/**
 * Writes the namespace's files into `dir`: hosts (localhost, and the registry's host on 127.0.0.1), resolv.conf (the
 * DNS recorder), empty global and user npmrc files, an npm cache folder.
 */
export function prepareRegistryNamespace(options: {
	dir: string;
	registryUrl: string;
	dns: DnsRecorder;
	caFile: string;
}): RegistryNamespace {
	const { dir, dns, caFile } = options;
	const registryHost = new URL(options.registryUrl).hostname;
	fs.mkdirSync(dir, { recursive: true });
	const hosts = path.join(dir, 'hosts');
	const resolv = path.join(dir, 'resolv.conf');
	fs.writeFileSync(hosts, ['127.0.0.1 localhost', '::1 localhost', `127.0.0.1 ${registryHost}`, ''].join('\n'));
	// One attempt, one second: a name not in hosts fails fast (the recorder answers at once anyway).
	fs.writeFileSync(resolv, [`nameserver ${dns.address}`, 'options timeout:1 attempts:1', ''].join('\n'));
	fs.writeFileSync(path.join(dir, 'npmrc-global'), '');
	fs.writeFileSync(path.join(dir, 'npmrc-user'), '');
	fs.mkdirSync(path.join(dir, 'npm-cache'), { recursive: true });

	// sh runs inside the new namespace: the bind mounts are private to it (and to n8n, which it execs into).
	const script = 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"';
	return {
		dir,
		registryHost,
		wrap: (command, args) => ({
			command: 'unshare',
			args: ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'n8n-namespace', hosts, resolv, command, ...args],
		}),
		env: (env) => ({
			...Object.fromEntries(Object.entries(env).filter(([key]) => !/^npm_/i.test(key))),
			NODE_EXTRA_CA_CERTS: caFile,
			npm_config_globalconfig: path.join(dir, 'npmrc-global'),
			npm_config_userconfig: path.join(dir, 'npmrc-user'),
			npm_config_cache: path.join(dir, 'npm-cache'),
			npm_config_update_notifier: 'false',
		}),
	};
}
