import { userSetInput } from '../../nodes/GenGatewayVideo/parameters';

describe('userSetInput: what counts as set by the user', () => {
	it('drops values equal to the model defaults, but always keeps a required duration', () => {
		const input = userSetInput('sd_2.0_discount', {
			prompt: 'p',
			duration: 5,
			aspectRatio: '',
			resolution: '720p',
			generateAudio: true,
			seed: '',
			referenceImages: '',
		});
		expect(input).toEqual({ prompt: 'p', duration: 5 });
	});

	it('drops the default duration of a model where duration may be omitted', () => {
		expect(userSetInput('gk_video', { prompt: 'p', duration: 8 })).toEqual({ prompt: 'p' });
		expect(userSetInput('gk_video', { prompt: 'p', duration: 3 })).toEqual({ prompt: 'p', duration: 3 });
	});

	it('keeps a value that differs from this model default even if it is another model default', () => {
		expect(userSetInput('sdx_2.0_nsfw_c1', { prompt: 'p', duration: 5, generateAudio: true })).toEqual({
			prompt: 'p',
			duration: 5,
			generateAudio: true,
		});
		expect(userSetInput('sd_2.0_special', { prompt: 'p', duration: 5, generateAudio: false })).toEqual({
			prompt: 'p',
			duration: 5,
			generateAudio: false,
		});
	});

	it('ignores defaults that a hidden variant filled in for a field the model lacks, keeps real values', () => {
		// With the model from an expression, n8n shows every variant and fills their defaults.
		expect(userSetInput('gk_video', { prompt: 'p', generateAudio: true, seed: '', lastImage: '' })).toEqual({
			prompt: 'p',
		});
		expect(userSetInput('gk_video', { prompt: 'p', seed: '42' })).toEqual({ prompt: 'p', seed: '42' });
	});

	it('passes an unknown model through untouched for the validator to reject', () => {
		const raw = { prompt: 'p', duration: 5 };
		expect(userSetInput('nope', raw)).toBe(raw);
	});
});
