import { findVideoModel } from '../../nodes/GenGatewayVideo/model/matrix';
import { InvalidVideoRequest, parseUrlList } from '../../nodes/GenGatewayVideo/model/fieldParsers';
import { buildVideoRequest } from '../../nodes/GenGatewayVideo/model/requestBody';
import { INVALID_CASES, VALID_CASES } from '../support/videoCases';

describe('buildVideoRequest: valid combinations of every model', () => {
	it.each(VALID_CASES.map((c) => [`${c.model}: ${c.name}`, c]))('%s', (_, c) => {
		const body = buildVideoRequest(c.model, c.input);
		const model = findVideoModel(c.model)!;
		expect(body.model).toBe(c.model);
		expect(body.prompt).toBe(c.input.prompt);
		if (model.duration.required) expect(Number.isInteger(body.duration)).toBe(true);
		if (body.generate_audio !== undefined) expect(typeof body.generate_audio).toBe('boolean');
		if (body.seed !== undefined) expect(Number.isInteger(body.seed)).toBe(true);
		for (const key of ['reference_images', 'reference_videos', 'reference_audios'] as const) {
			if (body[key]) expect((body[key] as string[]).every((u) => /^https:\/\//.test(u))).toBe(true);
		}
		if (body.first_image !== undefined) expect(typeof body.first_image).toBe('string');
		// Only known request fields, nothing undefined.
		for (const [key, value] of Object.entries(body)) {
			expect(value).not.toBeUndefined();
			expect([
				'model', 'prompt', 'duration', 'aspect_ratio', 'resolution', 'seed', 'generate_audio',
				'reference_images', 'reference_videos', 'reference_audios', 'first_image', 'last_image',
			]).toContain(key);
		}
	});
});

describe('buildVideoRequest: invalid combinations are rejected, naming field, model and what is allowed', () => {
	it.each(INVALID_CASES.map((c) => [`${c.model}: ${c.name}`, c]))('%s', (_, c) => {
		let caught: unknown;
		try {
			buildVideoRequest(c.model, c.input);
		} catch (error) {
			caught = error;
		}
		expect(caught).toBeInstanceOf(InvalidVideoRequest);
		const error = caught as InvalidVideoRequest;
		expect(error.field).toBe(c.field);
		expect(error.message.startsWith(`${c.field}: `)).toBe(true);
		if (c.field !== 'model') expect(error.message).toContain(`(model ${c.model})`);
		else expect(error.message).toContain('allowed: sd_2.5_discount');
	});
});

describe('what is sent', () => {
	it('sends only what was set, with generate_audio as a JSON boolean and seed as an integer', () => {
		expect(buildVideoRequest('gk_video', { prompt: 'p' })).toEqual({ model: 'gk_video', prompt: 'p' });
		expect(
			buildVideoRequest('sdx_2.0_nsfw_c1', { prompt: 'p', duration: '7', generateAudio: 'true', seed: '12' }),
		).toEqual({ model: 'sdx_2.0_nsfw_c1', prompt: 'p', duration: 7, generate_audio: true, seed: 12 });
	});

	it('a required duration the user did not set takes the model default from the matrix; an optional one is not sent', () => {
		expect(buildVideoRequest('sd_2.0_discount', { prompt: 'p' })).toEqual({ model: 'sd_2.0_discount', prompt: 'p', duration: 5 });
		expect(buildVideoRequest('sd_2.0_fast_special', { prompt: 'p', duration: '' })).toEqual({
			model: 'sd_2.0_fast_special',
			prompt: 'p',
			duration: 5,
		});
		expect(buildVideoRequest('gk_1.5', { prompt: 'p' })).toEqual({ model: 'gk_1.5', prompt: 'p' });
	});

	it('refuses a set field the model does not support, naming it', () => {
		expect(() => buildVideoRequest('gk_video', { prompt: 'p', generateAudio: true })).toThrow(
			'generateAudio: this model does not support audio generation; leave it empty (model gk_video)',
		);
	});

	it('refuses a seed beyond 2^53 - 1 (it could not be sent exactly) and keeps the largest exact one', () => {
		for (const seed of ['123456789012345678901', 1e21, 2 ** 53, '-9007199254740992']) {
			expect(() => buildVideoRequest('sd_2.0_special', { prompt: 'p', duration: 5, seed })).toThrow(
				/^seed: .* is too large: a seed can be at most 9007199254740991 \(2\^53 − 1\)/,
			);
		}
		expect(buildVideoRequest('sd_2.0_special', { prompt: 'p', seed: '9007199254740991' }).seed).toBe(9007199254740991);
	});

	it('takes a frame given as an array of one as a single URL', () => {
		expect(buildVideoRequest('gk_1.5', { prompt: 'p', firstImage: ['https://x.example/a.png'] }).first_image).toBe(
			'https://x.example/a.png',
		);
	});

	it('explains allowed values in the message', () => {
		expect(() => buildVideoRequest('sd_2.0_fast_special', { prompt: 'p', duration: 5, resolution: '1080p' })).toThrow(
			'resolution: "1080p" is not allowed; allowed: 720p (model sd_2.0_fast_special)',
		);
		expect(() => buildVideoRequest('sd_2.0_discount', { prompt: 'p', duration: 20 })).toThrow(
			'duration: 20 is not allowed; allowed: 5–15 seconds, a whole number (model sd_2.0_discount)',
		);
		expect(() => buildVideoRequest('gk_1.5', { prompt: 'p', lastImage: 'https://x.example/a.png' })).toThrow(
			'lastImage: this model does not support a last frame; leave it empty (model gk_1.5)',
		);
	});
});

describe('URLs (WHATWG parsing, http/https, a host, nothing the parser would rewrite)', () => {
	const refused = (field: string, value: unknown) => {
		try {
			buildVideoRequest('sd_2.0_special', { prompt: 'p', [field]: value });
		} catch (error) {
			return (error as Error).message;
		}
		return 'accepted';
	};
	it.each([
		['https:example.com/a.png', /must start with http:\/\/ or https:\/\//],
		['http:/example.com/a.png', /must start with http:\/\/ or https:\/\//],
		['https://example.com\\a.png', /contains a backslash/],
		['https://exa mple.com/a.png', /takes exactly one URL, got 2/],
		[['https://exa mple.com/a.png'], /contains white space/],
		['https://example.com/a.png https://example.com/b.png', /takes exactly one URL, got 2/],
		['https://example.com/a.png,https://example.com/b.png', /takes exactly one URL, got 2/],
	] as Array<[unknown, RegExp]>)('a frame of %j is refused clearly', (value, pattern) => {
		expect(refused('firstImage', value)).toMatch(pattern);
	});

	it('a URL with a user name and password is refused without repeating them', () => {
		const message = refused('referenceImages', 'https://alice:s3cret@cdn.example.com/a.png');
		expect(message).toMatch(/contains a user name or password/);
		expect(message).not.toContain('s3cret');
		expect(message).not.toContain('alice');
	});

	it('keeps URLs with commas whole: splits on a comma only where another http(s):// follows', () => {
		const text = 'https://cdn.example.com/w_200,h_100/a.png, https://cdn.example.com/c_fill,g_auto/b.png\nhttps://x.example/c.png,';
		expect(parseUrlList('f', 'm', text)).toEqual([
			'https://cdn.example.com/w_200,h_100/a.png',
			'https://cdn.example.com/c_fill,g_auto/b.png',
			'https://x.example/c.png',
		]);
	});
});

describe('parseUrlList', () => {
	it('splits on commas before a URL, spaces and new lines and ignores empty parts', () => {
		expect(parseUrlList('f', 'm', ' https://a.example/1 ,https://a.example/2\n\nhttps://a.example/3 ')).toEqual([
			'https://a.example/1',
			'https://a.example/2',
			'https://a.example/3',
		]);
	});
	it('rejects odd shapes without crashing', () => {
		for (const value of [{ url: 'https://a.example' }, 42, [null], ['https://'], ['http://'], ['javascript:alert(1)']]) {
			expect(() => parseUrlList('f', 'm', value)).toThrow(InvalidVideoRequest);
		}
	});
});
