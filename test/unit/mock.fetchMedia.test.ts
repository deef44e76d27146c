/** Which submitted media URLs the mock fetches (loopback only), and how a failure reason shows a URL (no query). */
import { fetchFailureReason, isLoopbackUrl, mediaUrlsOf, startMediaFetches, withoutQuery } from '../mock/fetchMedia';
import type { TaskRecord } from '../mock/types';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.each([
	['http://127.0.0.1:5678/binary-data/signed?token=x', true],
	['http://127.45.6.7/a.png', true],
	['http://localhost:5678/a.png', true],
	['http://LOCALHOST/a.png', true],
	['http://n8n.localhost/a.png', true],
	['http://[::1]:5678/a.png', true],
	['https://example.com/a.png', false],
	['http://128.0.0.1/a.png', false],
	['http://127.0.0.1.example.com/a.png', false],
	['http://10.0.0.5/a.png', false],
	['not a url', false],
])('isLoopbackUrl(%s) = %s', (url, loopback) => {
	expect(isLoopbackUrl(url)).toBe(loopback);
});

test('a reason shows scheme, host, port and path; never the query, the fragment or credentials', () => {
	expect(withoutQuery('http://user:pw@127.0.0.1:5678/binary-data/signed?token=SECRET#x')).toBe(
		'http://127.0.0.1:5678/binary-data/signed',
	);
	expect(fetchFailureReason('first_image', 'http://localhost:1/a.png?token=SECRET', 'HTTP 404')).toBe(
		'first_image: could not fetch http://localhost:1/a.png (HTTP 404)',
	);
});

test('the URLs of a body: frames (a string or a one-element array) and each reference, in field order', () => {
	expect(
		mediaUrlsOf({
			prompt: 'p',
			reference_audios: ['http://a/1'],
			first_image: 'http://f/1',
			last_image: ['http://l/1'],
			reference_images: ['http://i/1', 'http://i/2'],
		}),
	).toEqual([
		{ field: 'first_image', index: 0, url: 'http://f/1' },
		{ field: 'last_image', index: 0, url: 'http://l/1' },
		{ field: 'reference_images', index: 0, url: 'http://i/1' },
		{ field: 'reference_images', index: 1, url: 'http://i/2' },
		{ field: 'reference_audios', index: 0, url: 'http://a/1' },
	]);
});

test('a URL with credentials fails showing neither them nor the query', async () => {
	const task = { body: { first_image: 'http://user:pw@127.0.0.1:9/a.png?token=SECRET' } } as unknown as TaskRecord;
	startMediaFetches(task, { rateLimit: 0, readFaultRate: 0, fetchMedia: 'loopback' });
	for (let i = 0; i < 100 && task.mediaFetch?.settledAtMs === undefined; i++) await sleep(10);
	const reason = task.mediaFetch?.failure?.reason ?? '';
	expect(reason).toMatch(/^first_image: could not fetch http:\/\/127\.0\.0\.1:9\/a\.png \(.+\)$/);
	expect(reason).not.toMatch(/SECRET|user|pw@/);
	// The admin record keeps the URL as submitted; its error, like the reason, does not.
	expect(task.fetchedMedia[0].error).not.toMatch(/SECRET|pw@/);
});
