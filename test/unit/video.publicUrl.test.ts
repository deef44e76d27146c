import type { IExecuteFunctions } from 'n8n-workflow';

import { BinarySourceProblem } from '../../nodes/GenGatewayVideo/media/binarySources';
import { webhookUrlSources, webhookUrlVariable } from '../../nodes/GenGatewayVideo/media/publicUrl';
import type { WebhookUrlVariable } from '../../nodes/GenGatewayVideo/media/publicUrl';
import { handOnWarning } from '../../nodes/GenGatewayVideo/media/reachability';
import { checkReachable } from '../../nodes/GenGatewayVideo/media/signedUrls';
import type { IssuedUrl } from '../../nodes/GenGatewayVideo/media/signedUrls';
import { warnOnce } from '../../nodes/shared/run/executionHints';

/**
 * Issue 37 point 13: which variable sets n8n's public URL on the running line, and what a binary source's signed URL
 * gets for each kind of service host and n8n address on each line: refused (a public service), a warning (a loopback
 * or private service: it may hand the URL on to a provider that cannot reach it), or nothing.
 */

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJiaW5hcnkiOiJ4In0.c2lnbmF0dXJl';
const signed = (origin: string) => `${origin}/rest/binary-data/signed?token=${TOKEN}`;
/** `WEBHOOK_URL` on its own, not as the tail of N8N_WEBHOOK_URL. */
const BARE_WEBHOOK_URL = /(^|[^_])WEBHOOK_URL/;

/** The helpers n8n's engine hands an execute context: n8n-core 2.30+ has getSecureEgressFilter, 1.x does not. */
const HELPERS = {
	'2.x': { getSecureEgressFilter: () => undefined, createBinarySignedUrl: () => '' },
	'1.x': { createBinarySignedUrl: () => '' },
} as const;
type Line = keyof typeof HELPERS;
const VARIABLE: Record<Line, WebhookUrlVariable> = { '2.x': 'N8N_WEBHOOK_URL', '1.x': 'WEBHOOK_URL' };

describe('webhookUrlVariable: the variable of n8n public URL, told by the execute context helpers', () => {
	it.each([
		['n8n 2.x (getSecureEgressFilter, n8n-core 2.30+)', HELPERS['2.x'], 'N8N_WEBHOOK_URL'],
		['n8n 1.x (no getSecureEgressFilter)', HELPERS['1.x'], 'WEBHOOK_URL'],
		['no helpers at all', undefined, 'WEBHOOK_URL'],
		['a getSecureEgressFilter that is not a function', { getSecureEgressFilter: true }, 'WEBHOOK_URL'],
	])('%s: %s', (_, helpers, variable) => {
		expect(webhookUrlVariable(helpers)).toBe(variable);
	});

	it("n8n's own engine in this repository (n8n-core 2.41.1) is told 2.x", () => {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const factory = require('n8n-core/dist/execution-engine/node-execution-context/utils/request-helpers/factory') as {
			getRequestHelperFunctions: (...args: unknown[]) => object;
		};
		const helpers = factory.getRequestHelperFunctions({}, {}, {});
		expect(webhookUrlVariable(helpers)).toBe('N8N_WEBHOOK_URL');
	});

	it('where n8n takes its public URL from, per line', () => {
		expect(webhookUrlSources('N8N_WEBHOOK_URL')).toMatch(/^N8N_WEBHOOK_URL, else the deprecated WEBHOOK_URL/);
		expect(webhookUrlSources('WEBHOOK_URL')).toMatch(/^WEBHOOK_URL, or when that is unset N8N_PROTOCOL/);
		expect(webhookUrlSources('WEBHOOK_URL')).not.toContain('N8N_WEBHOOK_URL');
	});
});

describe('handOnWarning: a loopback or private service handed a loopback or private n8n URL', () => {
	it.each([
		['http://127.0.0.1:3000', 'http://127.0.0.1:5678', 'loopback', 'loopback'],
		['http://localhost:3000/v1', 'http://192.168.1.20:5678', 'loopback', 'private'],
		['http://new-api:3000', 'http://n8n:5678', 'private', 'private'],
		['http://10.0.0.2:3000', 'http://localhost:5678', 'private', 'loopback'],
		['https://gateway.internal', 'http://[::1]:5678', 'private', 'loopback'],
	])('service %s, n8n %s: a warning naming both origins and the variable, never the token', (service, n8n, serviceKind, n8nKind) => {
		const warning = handOnWarning(service, signed(n8n), 'N8N_WEBHOOK_URL');
		expect(warning).toContain(`n8n URLs at ${new URL(n8n).origin} (a ${n8nKind} address)`);
		expect(warning).toContain(`the service at ${new URL(service).origin} is on a ${serviceKind} host`);
		expect(warning).toContain('cloud provider');
		expect(warning).toContain("set N8N_WEBHOOK_URL to n8n's public URL");
		expect(warning).not.toContain('token');
		expect(warning).not.toContain('eyJ');
	});

	it.each([
		// A public service is refused such a URL (unreachableProblem), not warned.
		['https://api.example.com', 'http://127.0.0.1:5678'],
		// n8n has a public URL: nothing to say.
		['http://127.0.0.1:3000', 'https://n8n.example.com'],
		['http://new-api:3000', 'https://n8n.example.com'],
		['https://api.example.com', 'https://n8n.example.com'],
		['', 'http://127.0.0.1:5678'],
		['http://127.0.0.1:3000', 'not a url'],
	])('service %s, n8n %s: none', (service, n8n) => {
		expect(handOnWarning(service, n8n.startsWith('http') ? signed(n8n) : n8n, 'WEBHOOK_URL')).toBeUndefined();
	});
});

/** A fake execute context: the credential's base URL, a line's helpers, and the hints it was given. */
function contextFor(baseUrl: string, line: Line) {
	const hints: unknown[] = [];
	const ctx = {
		getCredentials: async () => await Promise.resolve({ baseUrl, apiKey: 'k' }),
		helpers: HELPERS[line],
		addExecutionHints: (...given: unknown[]) => hints.push(...given),
	} as unknown as IExecuteFunctions;
	return { ctx, hints };
}

const issuedAt = (origin: string): IssuedUrl[] => [
	{
		parameter: 'firstImage',
		binary_field: 'data',
		mime_type: 'image/png',
		bytes: 608,
		url: signed(origin),
		expires_at: '2026-11-28T10:00:00.000Z',
	},
];

type Outcome = 'refused' | 'warned' | 'nothing';

describe('checkReachable: host kinds × lines', () => {
	const LOOPBACK = 'http://127.0.0.1:5678';
	const PRIVATE = 'http://10.0.0.5:5678';
	const PUBLIC = 'https://n8n.example.com';
	it.each<[string, string, Outcome]>([
		['https://api.example.com/v1', LOOPBACK, 'refused'],
		['https://api.example.com', PRIVATE, 'refused'],
		['https://api.example.com', PUBLIC, 'nothing'],
		['http://127.0.0.1:3000', LOOPBACK, 'warned'],
		['http://localhost:3000', PRIVATE, 'warned'],
		['http://127.0.0.1:3000', PUBLIC, 'nothing'],
		['http://192.168.1.5:3000/v1', LOOPBACK, 'warned'],
		['http://new-api:3000', PRIVATE, 'warned'],
		['http://new-api:3000', PUBLIC, 'nothing'],
	])('service %s, n8n %s: %s, naming the variable of each line', async (service, n8n, outcome) => {
		for (const line of ['2.x', '1.x'] as const) {
			const variable = VARIABLE[line];
			const { ctx, hints } = contextFor(service, line);
			const checking = checkReachable(ctx, issuedAt(n8n));
			if (outcome === 'refused') {
				const error = (await checking.catch((caught: unknown) => caught)) as BinarySourceProblem;
				expect(error).toBeInstanceOf(BinarySourceProblem);
				expect(error.message).toMatch(new RegExp(`; set ${variable} to n8n's public URL$`));
				expect(error.message).toContain(new URL(n8n).origin);
				expect(error.description).toContain(`Set ${variable} to an address the service at`);
				expect(error.description).toContain('Nothing was sent');
				if (line === '1.x') expect(`${error.message} ${error.description}`).not.toContain('N8N_WEBHOOK_URL');
				else expect(error.message).not.toMatch(BARE_WEBHOOK_URL);
				expect(`${error.message} ${error.description}`).not.toContain(TOKEN);
				expect(hints).toEqual([]);
				continue;
			}
			const warnings = await checking;
			if (outcome === 'nothing') {
				expect(warnings).toEqual([]);
				expect(hints).toEqual([]);
				continue;
			}
			expect(warnings).toHaveLength(1);
			expect(warnings[0]).toContain(`set ${variable} to n8n's public URL`);
			if (line === '1.x') expect(warnings[0]).not.toContain('N8N_WEBHOOK_URL');
			else expect(warnings[0]).not.toMatch(BARE_WEBHOOK_URL);
			expect(warnings[0]).not.toContain(TOKEN);
			expect(hints).toEqual([{ message: warnings[0], type: 'warning', location: 'outputPane' }]);
		}
	});

	it('no binary source: nothing checked, nothing returned', async () => {
		const { ctx, hints } = contextFor('https://api.example.com', '2.x');
		expect(await checkReachable(ctx, [])).toEqual([]);
		expect(hints).toEqual([]);
	});

	it('many items of one node run: each gets the warning, the editor one hint', async () => {
		const { ctx, hints } = contextFor('http://127.0.0.1:3000', '2.x');
		const first = await checkReachable(ctx, issuedAt('http://127.0.0.1:5678'));
		const second = await checkReachable(ctx, issuedAt('http://127.0.0.1:5678'));
		expect(second).toEqual(first);
		expect(hints).toHaveLength(1);
	});
});

describe('warnOnce', () => {
	it('a context without addExecutionHints: nothing shown, nothing thrown', () => {
		expect(() => warnOnce({} as IExecuteFunctions, 'x')).not.toThrow();
	});

	it('once per context and text', () => {
		const given: unknown[][] = [[], []];
		const contexts = given.map((list) => ({ addExecutionHints: (...hints: unknown[]) => list.push(...hints) }));
		for (const ctx of contexts) for (const text of ['a', 'a', 'b']) warnOnce(ctx as unknown as IExecuteFunctions, text);
		expect(given.map((list) => list.map((hint) => (hint as { message: string }).message))).toEqual([
			['a', 'b'],
			['a', 'b'],
		]);
	});
});
