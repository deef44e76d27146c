// Issue 51, points 1 and 2, as a property of the redirect rule (nodes/shared/transport/redirects.ts): over generated
// chains of redirects (to the base URL's origin, a sub-domain of it, a parent domain, another port, the other scheme,
// another host; absolute, scheme-relative and relative Locations; 301/302/303/307/308; a Location missing, unreadable
// or not http(s); chains longer than the limit), the key goes with a hop only when that hop's origin is the base
// URL's and the chain never left it; a chain that stays on the origin keeps the key to its end; a chain longer than
// the limit ends in the redirect failure the transport reports, and every redirect's own body is dropped.
import fc from 'fast-check';
import type { IN8nHttpFullResponse } from 'n8n-workflow';

import { followRead, MAX_READ_REDIRECTS, nextHop } from '../../nodes/shared/transport/redirects';
import type { RedirectFailure, RedirectHop } from '../../nodes/shared/transport/redirects';

const BASE = 'http://gw.example:8080/api';
const BASE_ORIGIN = 'http://gw.example:8080';

/** Where a hop may lead, as an absolute URL, a scheme-relative one or a path. */
const target = fc.constantFrom(
	'http://gw.example:8080/v1/files/a',
	'/v1/files/b',
	'files/c?x=1',
	'//gw.example:8080/v1/d',
	'http://GW.example:8080/v1/e#frag',
	'http://files.gw.example:8080/v1/f',
	'//files.gw.example:8080/g',
	'http://example:8080/h',
	'http://gw.example/i',
	'http://gw.example:8081/j',
	'https://gw.example:8080/k',
	'https://gw.example/l',
	'http://other.test/m',
	'http://127.0.0.1:8080/n',
	'http://gw.example.evil.test:8080/o',
	'http://user:pw@gw.example:8080/p',
);

type Answer = { status: number; location?: string } | { status: 200 };
const answer: fc.Arbitrary<Answer> = fc.oneof(
	{ weight: 6, arbitrary: fc.record({ status: fc.constantFrom(301, 302, 303, 307, 308), location: target }) },
	{ weight: 1, arbitrary: fc.record({ status: fc.constantFrom(302, 300, 304) }) },
	{ weight: 1, arbitrary: fc.record({ status: fc.constantFrom(302, 307), location: fc.constantFrom('file:///etc/passwd', 'http://[::1', 'javascript:alert(1)') }) },
);

const response = (a: Answer): IN8nHttpFullResponse & { dropped?: boolean } => ({
	statusCode: a.status,
	headers: 'location' in a && a.location !== undefined ? { location: a.location } : {},
	body: {},
});

interface Played {
	hops: RedirectHop[];
	failure?: unknown;
	ended?: RedirectFailure;
	dropped: number;
	redirectsAnswered: number;
}

async function play(first: Answer, rest: Answer[], method = 'GET', keyed = true): Promise<Played> {
	const hops: RedirectHop[] = [];
	const answers = [first, ...rest, { status: 200 } as Answer];
	let dropped = 0;
	try {
		const followed = await followRead(
			response(answers[0]),
			{ url: `${BASE}/v1/models`, method, baseUrl: BASE, keyed },
			async (hop) => {
				hops.push(hop);
				return response(answers[Math.min(hops.length, answers.length - 1)]);
			},
			() => dropped++,
		);
		const ended = 'failure' in followed ? followed : undefined;
		return { hops, dropped, redirectsAnswered: hops.length, ended };
	} catch (failure) {
		return { hops, failure, dropped, redirectsAnswered: hops.length };
	}
}

describe('the key goes to the base URL origin only, over generated redirect chains', () => {
	it('holds for every chain (1,000 runs)', async () => {
		await fc.assert(
			fc.asyncProperty(answer, fc.array(answer, { maxLength: 8 }), fc.constantFrom('GET', 'POST', 'HEAD'), fc.boolean(), async (first, rest, method, keyed) => {
				const { hops, failure, dropped } = await play(first, rest, method, keyed);
				// A chain that began without the key (a file host's download) never gets it.
				let left = !keyed;
				for (const hop of hops) {
					const origin = new URL(hop.url).origin;
					if (origin !== BASE_ORIGIN) left = true;
					// The invariant: the key with a hop only on the base URL's origin, and never after the chain left it.
					if (hop.withKey && (origin !== BASE_ORIGIN || left)) return false;
					// Liveness: a chain still on the origin keeps the key (the service's own redirects work).
					if (!hop.withKey && !left) return false;
					if (hop.url.includes('#')) return false;
				}
				if (hops.length > MAX_READ_REDIRECTS) return false;
				if (failure !== undefined) return false;
				// Every redirect that was followed, or refused for its length, had its own body dropped.
				return dropped >= hops.length;
			}),
			{ numRuns: 1000 },
		);
	});

	it('a sub-domain, another port and the other scheme are other origins; user info and letter case are not', () => {
		const hopTo = (location: string) =>
			nextHop({ statusCode: 302, headers: { location }, body: {} }, `${BASE}/v1/models`, 'GET', BASE_ORIGIN, true) as RedirectHop;
		expect(hopTo('http://files.gw.example:8080/v1/x').withKey).toBe(false);
		expect(hopTo('http://gw.example:8081/v1/x').withKey).toBe(false);
		expect(hopTo('https://gw.example:8080/v1/x').withKey).toBe(false);
		expect(hopTo('http://gw.example/v1/x').withKey).toBe(false);
		expect(hopTo('http://GW.EXAMPLE:8080/v1/x').withKey).toBe(true);
		expect(hopTo('/v1/x').withKey).toBe(true);
		expect(hopTo('../x').url).toBe('http://gw.example:8080/api/x');
	});

	it('back on the base origin after another origin, the key stays away', async () => {
		const { hops } = await play({ status: 302, location: 'http://files.gw.example:8080/a' }, [
			{ status: 302, location: 'http://gw.example:8080/v1/models' },
		]);
		expect(hops.map((hop) => hop.withKey)).toEqual([false, false]);
	});

	it('303, and 301/302 after anything but GET or HEAD, ask again with GET and without the body', async () => {
		const { hops } = await play({ status: 307, location: '/a' }, [{ status: 302, location: '/b' }, { status: 308, location: '/c' }], 'POST');
		expect(hops.map((hop) => [hop.method, hop.keepsBody])).toEqual([
			['POST', true],
			['GET', false],
			['GET', false],
		]);
	});

	it(`a chain longer than ${MAX_READ_REDIRECTS} ends in ERR_FR_TOO_MANY_REDIRECTS`, async () => {
		const loop = { status: 302, location: '/v1/models' };
		const { hops, ended } = await play(loop, Array.from({ length: 10 }, () => loop));
		expect(hops).toHaveLength(MAX_READ_REDIRECTS);
		expect(ended?.failure).toBe('ERR_FR_TOO_MANY_REDIRECTS');
	});
});
