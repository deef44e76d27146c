/** Inputs are checked before anything is sent: path segments, URLs (WHATWG), reference text, user info, seeds. */
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { generateParams as generate } from '../support/faultTable';
import { findSecret, runVideo } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-inputs-6b5a49' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const special = (extra: Record<string, unknown>) =>
	generate('a fox', { model: 'sd_2.5_special', waitForCompletion: false, ...extra });

describe('Video inputs', () => {
	it.each([
		['getStatus', { taskId: '..' }, /^Task ID: "\.\." cannot be used: it would change the request path/],
		['waitForCompletion', { taskId: '.' }, /^Task ID: "\." cannot be used/],
		['download', { taskId: 'task_1/../../models' }, /^Task ID: .* cannot be used/],
		['download', { taskId: '%2e%2e' }, /^Task ID: "%2e%2e" cannot be used/],
		['download', { taskId: 'task_1', artifactKey: '..' }, /^Artifact Key: "\.\." cannot be used/],
	])('%s with %j is refused before any request', async (operation, parameters, pattern) => {
		const result = await runVideo(mock, { operation, ...parameters });
		expect(result.nodeError('Video')!.message).toMatch(pattern);
		expect(await mock.log()).toEqual([]);
	});

	it.each([
		['firstImage', 'https:example.com/a.png', /must start with http:\/\/ or https:\/\//],
		['firstImage', 'https://example.com\\a.png', /contains a backslash/],
		['firstImage', 'https://example.com/a.png, https://example.com/b.png', /takes exactly one URL, got 2/],
		['lastImage', 'https://example.com/a.png https://example.com/b.png', /takes exactly one URL, got 2/],
		['seed', '123456789012345678901', /too large: a seed can be at most 9007199254740991/],
		['seed', '={{ 1e21 }}', /too large/],
	])('%s %j is refused clearly and nothing is sent', async (field, value, pattern) => {
		const result = await runVideo(mock, special({ [field]: value }));
		expect(result.nodeError('Video')!.message).toMatch(new RegExp(`^Invalid video request: ${field}: .*${pattern.source}`));
		expect(await mock.log()).toEqual([]);
	});

	it('a URL with user:password is refused, and the password is not repeated in the message or description', async () => {
		const result = await runVideo(mock, special({ referenceImages: 'https://alice:pa55word@cdn.example.com/a.png' }));
		const error = result.nodeError('Video')!;
		expect(error.message).toMatch(/referenceImages: .* contains a user name or password/);
		// What the node says (n8n itself keeps the node's parameters, as typed, with its errors).
		const { description } = error as { description?: string };
		expect(findSecret('pa55word', error.message, description ?? '')).toEqual([]);
		expect(await mock.log()).toEqual([]);
	});

	it('reference URLs with commas survive the split (commas separate only before another http(s)://)', async () => {
		const text = 'https://cdn.example.com/w_200,h_100/a.png, https://cdn.example.com/c_fill,g_auto/b.png\nhttps://cdn.example.com/c.png';
		const result = await runVideo(mock, special({ referenceImages: text }));
		expect(result.error).toBeUndefined();
		const [post] = (await mock.log()).filter((entry) => entry.method === 'POST');
		expect((post.body as { reference_images: string[] }).reference_images).toEqual([
			'https://cdn.example.com/w_200,h_100/a.png',
			'https://cdn.example.com/c_fill,g_auto/b.png',
			'https://cdn.example.com/c.png',
		]);
	});
});
