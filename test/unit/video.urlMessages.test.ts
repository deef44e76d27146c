import { buildVideoRequest } from '../../nodes/GenGatewayVideo/model/requestBody';

/**
 * Video's reference URL errors, word for word: the checks are shared with Chat's image URLs (nodes/shared/input/
 * urls.ts), the words are Video's own and stay as users and their error handling have seen them.
 */

const message = (value: unknown) => {
	try {
		buildVideoRequest('sd_2.0_special', { prompt: 'p', referenceImages: value });
	} catch (error) {
		return (error as Error).message;
	}
	return 'accepted';
};

const MODEL = ' (model sd_2.0_special)';

describe('Video reference URL errors', () => {
	it.each([
		[
			'a URL over 4096 characters',
			`https://a.example/${'x'.repeat(4100)}`,
			`"https://a.example/${'x'.repeat(39)}..." is longer than 4096 characters`,
		],
		[
			'white space inside one entry',
			['https://exa mple.com/a.png'],
			'"https://exa mple.com/a.png" contains white space; give one URL per entry (spaces inside a URL are written %20)',
		],
		[
			'a backslash',
			'https://example.com\\a.png',
			'"https://example.com\\\\a.png" contains a backslash; URLs use forward slashes',
		],
		[
			'a file:// URL',
			'file:///etc/passwd',
			'"file:///etc/passwd" is not an HTTP(S) URL (it must start with http:// or https:// and name a host); file:// ' +
				'URLs and local paths are not allowed (the service must be able to fetch it)',
		],
		[
			'https: without //',
			'https:example.com/a.png',
			'"https:example.com/a.png" is not an HTTP(S) URL (it must start with http:// or https:// and name a host); ' +
				'file:// URLs and local paths are not allowed (the service must be able to fetch it)',
		],
		[
			'a user name and password',
			'https://alice:s3cret@cdn.example.com/a.png',
			'"https://***@cdn.example.com/a.png" contains a user name or password; these are not sent (the URL would carry ' +
				'them to the service and into the output)',
		],
		['an entry that is not text', [42], 'each entry must be an HTTP(S) URL, got 42'],
	] as Array<[string, unknown, string]>)('%s: says exactly what is wrong', (_name, value, problem) => {
		expect(message(value)).toBe(`referenceImages: ${problem}${MODEL}`);
	});

	it('accepts an HTTP(S) URL with commas, a port, a query and a fragment', () => {
		expect(message('https://cdn.example.com:8443/w_200,h_100/a.png?x=1#f')).toBe('accepted');
	});
});
