import { userSetInput } from '../../nodes/GenGatewayVideo/model/parameters';

const FROM_EXPRESSION = { modelFixed: false, expressions: new Set<string>() };

describe('userSetInput: what counts as set by the user', () => {
	it('with a fixed model, drops values equal to that model defaults (a required duration then takes the default)', () => {
		const input = userSetInput('sd_2.0_discount', {
			prompt: 'p',
			duration: 5,
			aspectRatio: '',
			resolution: '720p',
			generateAudio: true,
			seed: '',
			referenceImages: '',
		});
		expect(input).toEqual({ prompt: 'p' });
	});

	it('drops the default duration of a model where duration may be omitted', () => {
		expect(userSetInput('gk_video', { prompt: 'p', duration: 8 })).toEqual({ prompt: 'p' });
		expect(userSetInput('gk_video', { prompt: 'p', duration: 3 })).toEqual({ prompt: 'p', duration: 3 });
	});

	it('with a fixed model, keeps a value that differs from its default even if it is another model default', () => {
		expect(userSetInput('sdx_2.0_nsfw_c1', { prompt: 'p', duration: 8, generateAudio: true })).toEqual({
			prompt: 'p',
			duration: 8,
			generateAudio: true,
		});
	});

	it('with the model from an expression, any variant default is what n8n filled in: not set', () => {
		// n8n shows every variant then, and fills one variant's default into each field.
		expect(
			userSetInput('sd_2.0_special', { prompt: 'p', duration: 8, generateAudio: false, resolution: '720p' }, FROM_EXPRESSION),
		).toEqual({ prompt: 'p' });
		expect(userSetInput('gk_video', { prompt: 'p', generateAudio: true, seed: '' }, FROM_EXPRESSION)).toEqual({ prompt: 'p' });
		expect(userSetInput('gk_video', { prompt: 'p', seed: '42' }, FROM_EXPRESSION)).toEqual({ prompt: 'p', seed: '42' });
	});

	it('a field given as an expression is the user value whatever it is, unless blank', () => {
		const source = { modelFixed: false, expressions: new Set(['generateAudio', 'duration', 'seed']) };
		expect(userSetInput('gk_video', { prompt: 'p', generateAudio: true, duration: 8, seed: '' }, source)).toEqual({
			prompt: 'p',
			generateAudio: true,
			duration: 8,
		});
	});

	it('an unknown model: any variant default counts as not set (the validator then rejects the model)', () => {
		expect(userSetInput('nope', { prompt: 'p', duration: 5, seed: '7' })).toEqual({ prompt: 'p', seed: '7' });
	});
});
