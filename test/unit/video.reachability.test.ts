import { hostKind, originOf, unreachableProblem } from '../../nodes/GenGatewayVideo/media/reachability';

/** Where a host can be reached from, and which signed URLs a service cannot fetch (issue 32). */
describe('hostKind', () => {
	it.each([
		['127.0.0.1', 'loopback'],
		['127.3.4.5', 'loopback'],
		['localhost', 'loopback'],
		['LOCALHOST', 'loopback'],
		['n8n.localhost', 'loopback'],
		['::1', 'loopback'],
		['[::1]', 'loopback'],
		['[::ffff:7f00:1]', 'loopback'],
		['::ffff:127.0.0.1', 'loopback'],
		['10.0.0.5', 'private'],
		['172.16.0.1', 'private'],
		['172.31.255.255', 'private'],
		['192.168.1.20', 'private'],
		['169.254.169.254', 'private'],
		['100.64.0.1', 'private'],
		['0.0.0.0', 'private'],
		['[fc00::1]', 'private'],
		['[fd12:3456::1]', 'private'],
		['[fe80::1]', 'private'],
		['[::ffff:c0a8:101]', 'private'],
		['n8n', 'private'],
		['gateway', 'private'],
		['nas.local', 'private'],
		['n8n.internal', 'private'],
		['box.lan', 'private'],
		['router.home.arpa', 'private'],
		['172.15.0.1', 'public'],
		['172.32.0.1', 'public'],
		['8.8.8.8', 'public'],
		['[2001:db8::1]', 'public'],
		['api.example.com', 'public'],
		['n8n.example.com.', 'public'],
		['example.com', 'public'],
	])('%s is %s', (host, kind) => {
		expect(hostKind(host)).toBe(kind);
	});
});

describe('unreachableProblem: a service on a public host cannot fetch from a loopback or private n8n', () => {
	const signed = (origin: string) => `${origin}/rest/binary-data/signed?token=eyJhbGciOiJIUzI1NiJ9.e30.sig`;
	it.each([
		['https://api.example.com', 'http://localhost:5678', 'loopback'],
		['https://api.example.com/v1', 'http://127.0.0.1:5678', 'loopback'],
		['https://api.example.com', 'http://[::1]:5678', 'loopback'],
		['https://api.example.com', 'http://192.168.1.20:5678', 'private'],
		['https://api.example.com', 'http://n8n:5678', 'private'],
		['https://api.example.com', 'https://n8n.internal', 'private'],
		['https://8.8.8.8', 'http://10.1.2.3:5678', 'private'],
	])('service %s, n8n %s: refused (%s), naming both origins and never the token', (service, n8n, kind) => {
		const problem = unreachableProblem(service, signed(n8n));
		expect(problem).toContain(`(a ${kind} address)`);
		expect(problem).toContain(new URL(n8n).origin);
		expect(problem).toContain(new URL(service).origin);
		expect(problem).not.toContain('token');
		expect(problem).not.toContain('eyJ');
	});

	it.each([
		// Both on this machine: the local mock, a gateway beside n8n.
		['http://127.0.0.1:3000', 'http://127.0.0.1:5678'],
		['http://localhost:3000', 'http://localhost:5678'],
		// A service on the local network may reach n8n there; the addresses cannot tell.
		['http://gateway:3000', 'http://n8n:5678'],
		['http://10.0.0.2:3000', 'http://10.0.0.3:5678'],
		['http://192.168.1.5:3000', 'http://127.0.0.1:5678'],
		// n8n has a public URL.
		['https://api.example.com', 'https://n8n.example.com'],
		['http://127.0.0.1:3000', 'https://n8n.example.com'],
		// Not URLs: nothing to tell (the request's own checks refuse them).
		['', 'http://127.0.0.1:5678'],
		['https://api.example.com', 'not a url'],
	])('service %s, n8n %s: allowed', (service, n8n) => {
		expect(unreachableProblem(service, n8n.startsWith('http') ? signed(n8n) : n8n)).toBeUndefined();
	});

	it('originOf keeps the scheme, host and port, never the path or query', () => {
		expect(originOf('http://127.0.0.1:5678/rest/binary-data/signed?token=abc')).toBe('http://127.0.0.1:5678');
		expect(originOf('nope')).toBe('(not a URL)');
	});
});
