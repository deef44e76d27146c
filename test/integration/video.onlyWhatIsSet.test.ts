/**
 * Only what the user set is sent. Through n8n's engine (which fills every shown field with a default, and with the
 * Model given as an expression shows every model's variant of each field): a value nobody set never reaches the
 * service; a required one takes the item's model default from the matrix.
 */
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { runVideo } from '../support/videoRun';

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'sentinel-key-onlyset-4d3c2b' });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

const sentBodies = async () =>
	(await mock.log()).filter((entry) => entry.method === 'POST').map((entry) => entry.body as Record<string, unknown>);

const byModel = (bodies: Array<Record<string, unknown>>) =>
	Object.fromEntries(bodies.map((body) => [body.model as string, body]));

describe('Video: only what the user set is sent', () => {
	it('Model from an expression, nothing else set: each model gets its prompt and, where required, its own default duration', async () => {
		// Also what a user gets who picked a model, touched nothing and switched Model to an expression: the stored
		// parameters are then just these.
		const models = ['sd_2.0_discount', 'sdx_2.0_nsfw_c1', 'sd_2.5_special', 'gk_video', 'gk_1.5'];
		const result = await runVideo(
			mock,
			{ operation: 'generate', model: '={{ $json.model }}', prompt: '={{ $json.prompt }}', waitForCompletion: false },
			{ input: models.map((model) => ({ model, prompt: `a fox for ${model}` })) },
		);
		expect(result.error).toBeUndefined();
		expect(byModel(await sentBodies())).toEqual({
			'sd_2.0_discount': { model: 'sd_2.0_discount', prompt: 'a fox for sd_2.0_discount', duration: 5 },
			'sdx_2.0_nsfw_c1': { model: 'sdx_2.0_nsfw_c1', prompt: 'a fox for sdx_2.0_nsfw_c1', duration: 5 },
			'sd_2.5_special': { model: 'sd_2.5_special', prompt: 'a fox for sd_2.5_special', duration: 5 },
			gk_video: { model: 'gk_video', prompt: 'a fox for gk_video' },
			'gk_1.5': { model: 'gk_1.5', prompt: 'a fox for gk_1.5' },
		});
	});

	it('a field the model does not support, set through an expression, is refused clearly and nothing is sent', async () => {
		const result = await runVideo(mock, {
			operation: 'generate',
			model: '={{ "gk_video" }}',
			prompt: 'a fox',
			generateAudio: '={{ true }}',
			waitForCompletion: false,
		});
		expect(result.nodeError('Video')!.message).toBe(
			'Invalid video request: generateAudio: this model does not support audio generation; leave it empty (model gk_video)',
		);
		expect(await mock.log()).toEqual([]);
	});

	it('a value set through an expression is sent even when it equals a default; typed values differing from the default too', async () => {
		const result = await runVideo(
			mock,
			{
				operation: 'generate',
				model: '={{ $json.model }}',
				prompt: '={{ $json.prompt }}',
				generateAudio: '={{ $json.audio }}',
				duration: '={{ $json.duration }}',
				waitForCompletion: false,
			},
			{ input: [{ model: 'sd_2.0_special', prompt: 'quiet fox', audio: false, duration: 8 }] },
		);
		expect(result.error).toBeUndefined();
		expect(await sentBodies()).toEqual([
			{ model: 'sd_2.0_special', prompt: 'quiet fox', duration: 8, generate_audio: false },
		]);

		await mock.reset();
		const typed = await runVideo(mock, {
			operation: 'generate',
			model: 'sd_2.0_special',
			prompt: 'a fox',
			duration: 8,
			generateAudio: false,
			resolution: '720p',
			waitForCompletion: false,
		});
		expect(typed.error).toBeUndefined();
		// 720p is this model's default (left to the service); 8 s and audio off differ from its defaults.
		expect(await sentBodies()).toEqual([{ model: 'sd_2.0_special', prompt: 'a fox', duration: 8, generate_audio: false }]);
	});
});
