import { displayed, videoDescription as description } from '../support/videoEditor';
import { VIDEO_MODELS } from '../../nodes/GenGatewayVideo/model/matrix';
import type { VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';

/**
 * What the editor shows for each model, computed with n8n-workflow's own display logic (the code the editor and the
 * engine use), compared with the matrix row by row.
 */

const MODEL_FIELDS = [
	'duration',
	'aspectRatio',
	'resolution',
	'generateAudio',
	'seed',
	'firstImage',
	'lastImage',
	'referenceImages',
	'referenceVideos',
	'referenceAudios',
];

/** Written from the matrix's meaning, not from the field code: which fields a model must show. */
function expectedFields(model: VideoModelCapabilities): string[] {
	const fields = ['duration', 'aspectRatio', 'resolution'];
	if (model.audio.supported) fields.push('generateAudio');
	if (model.seed) fields.push('seed');
	if (model.firstImage) fields.push('firstImage');
	if (model.lastImage) fields.push('lastImage');
	if (model.references.images > 0) fields.push('referenceImages');
	if (model.references.videos > 0) fields.push('referenceVideos');
	if (model.references.audios > 0) fields.push('referenceAudios');
	return fields;
}

describe('Generate shows exactly the matrix fields of the selected model', () => {
	it.each(VIDEO_MODELS.map((m) => [m.id, m]))('%s', (id, model) => {
		const { parameters, properties } = displayed({ operation: 'generate', model: id });
		const shown = properties.map((p) => p.name);
		// One variant of each field, never two.
		expect(shown.length).toBe(new Set(shown).size);
		expect(shown.filter((name) => MODEL_FIELDS.includes(name)).sort()).toEqual(expectedFields(model).sort());
		expect(shown).toEqual(
			expect.arrayContaining(['operation', 'model', 'prompt', 'waitForCompletion', 'downloadVideo', 'options']),
		);
		const byName = Object.fromEntries(properties.map((p) => [p.name, p]));

		const duration = byName.duration;
		expect(duration.typeOptions).toMatchObject({ minValue: model.duration.min, maxValue: model.duration.max });
		expect(duration.default).toBe(model.duration.default);
		expect(parameters.duration).toBe(model.duration.default);
		expect(!!duration.required).toBe(model.duration.required);

		const ratios = byName.aspectRatio.options!.map((o) => (o as { value: string }).value).filter((v) => v !== '');
		expect(ratios).toEqual([...model.aspectRatios]);
		expect(byName.aspectRatio.default).toBe('');

		expect(byName.resolution.options!.map((o) => (o as { value: string }).value)).toEqual([...model.resolutions]);
		expect(parameters.resolution).toBe(model.defaultResolution);

		if (model.audio.supported) expect(parameters.generateAudio).toBe(model.audio.default);
		for (const [field, limit] of [
			['referenceImages', model.references.images],
			['referenceVideos', model.references.videos],
			['referenceAudios', model.references.audios],
		] as const) {
			if (limit > 0) expect(byName[field].description).toContain(`up to ${limit} `);
		}
	});

	it('examples from the issue: gk_1.5 and sd_2.5_discount', () => {
		const gk = displayed({ operation: 'generate', model: 'gk_1.5' }).properties.map((p) => p.name);
		expect(gk).toContain('firstImage');
		for (const hidden of ['lastImage', 'generateAudio', 'seed', 'referenceVideos', 'referenceAudios']) {
			expect(gk).not.toContain(hidden);
		}
		const sd = displayed({ operation: 'generate', model: 'sd_2.5_discount' }).properties;
		const names = sd.map((p) => p.name);
		expect(names).not.toContain('firstImage');
		expect(names).not.toContain('lastImage');
		const refs = sd.filter((p) => MODEL_FIELDS.includes(p.name) && p.name.startsWith('reference')).map((p) => p.displayName);
		expect(refs).toEqual(['Reference Images (Up to 30)', 'Reference Videos (Up to 10)', 'Reference Audios (Up to 10)']);
	});

	it('other operations show no Generate field', () => {
		for (const operation of ['getStatus', 'waitForCompletion', 'listArtifacts', 'download']) {
			const names = displayed({ operation }).properties.map((p) => p.name);
			expect(names).toContain('taskId');
			for (const field of [...MODEL_FIELDS, 'model', 'prompt']) expect(names).not.toContain(field);
		}
	});

	it('every model has one option in the model picker, with no extra', () => {
		const model = description.properties.find((p) => p.name === 'model')!;
		expect(model.options!.map((o) => (o as { value: string }).value)).toEqual(VIDEO_MODELS.map((m) => m.id));
	});
});
