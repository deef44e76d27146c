import { Readable } from 'stream';
import type { INodeParameters } from 'n8n-workflow';

import { countAtMost } from '../../nodes/shared/binary/storedBinary';
import { mediaTypeOf } from '../../nodes/GenGatewayVideo/media/mediaKinds';
import type { MediaKind } from '../../nodes/GenGatewayVideo/media/mediaKinds';
import { isTemporaryUpload } from '../../nodes/GenGatewayVideo/media/servedCopy';
import { InvalidVideoRequest, parseBinaryFieldNames } from '../../nodes/GenGatewayVideo/model/fieldParsers';
import { VIDEO_MODELS, videoModelOf } from '../../nodes/GenGatewayVideo/model/matrix';
import type { VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';
import { displayed, videoDescription as description } from '../support/videoEditor';

/**
 * Issue 32: frames and references from binary fields. The editor's new parameters (`${N}Source`, `${N}BinaryField`)
 * are derived from the one field spec and shown, per model, exactly for the media fields of its matrix row; the
 * parsers of binary field names and the byte sniffing of each kind; the submission guard's stable identity.
 */

/** Written from the matrix's meaning: the media fields a model takes, with how many files each. */
function mediaFields(model: VideoModelCapabilities): Array<[string, number]> {
	const fields: Array<[string, number]> = [];
	if (model.firstImage) fields.push(['firstImage', 1]);
	if (model.lastImage) fields.push(['lastImage', 1]);
	if (model.references.images > 0) fields.push(['referenceImages', model.references.images]);
	if (model.references.videos > 0) fields.push(['referenceVideos', model.references.videos]);
	if (model.references.audios > 0) fields.push(['referenceAudios', model.references.audios]);
	return fields;
}

const ALL_MEDIA = ['firstImage', 'lastImage', 'referenceImages', 'referenceVideos', 'referenceAudios'];
const newNames = (field: string) => [`${field}Source`, `${field}BinaryField`];

describe('the source of each media field, per model', () => {
	it.each(VIDEO_MODELS.map((m) => [m.id, m]))('%s: URL by default (saved workflows unchanged)', (id, model) => {
		const { parameters, properties } = displayed({ operation: 'generate', model: id });
		const shown = properties.map((p) => p.name);
		expect(shown.length).toBe(new Set(shown).size);
		const fields = mediaFields(model).map(([field]) => field);
		for (const field of ALL_MEDIA) {
			const supported = fields.includes(field);
			expect([shown.includes(field), shown.includes(`${field}Source`)]).toEqual([supported, supported]);
			expect(shown).not.toContain(`${field}BinaryField`);
			if (supported) expect(parameters[`${field}Source`]).toBe('url');
		}
	});

	it.each(VIDEO_MODELS.map((m) => [m.id, m]))('%s: Binary Field shows field name(s), not the URL', (id, model) => {
		const fields = mediaFields(model);
		const values: INodeParameters = { operation: 'generate', model: id };
		for (const field of ALL_MEDIA) values[`${field}Source`] = 'binary';
		const { parameters, properties } = displayed(values);
		const byName = Object.fromEntries(properties.map((p) => [p.name, p]));
		for (const field of ALL_MEDIA) {
			const limit = fields.find(([name]) => name === field)?.[1];
			expect(byName[field]).toBeUndefined();
			if (limit === undefined) {
				for (const name of newNames(field)) expect(byName[name]).toBeUndefined();
				continue;
			}
			const binaryField = byName[`${field}BinaryField`];
			expect(binaryField.type).toBe('string');
			if (field.startsWith('reference')) {
				expect(parameters[`${field}BinaryField`]).toBe('');
				expect(binaryField.description).toContain(`up to ${limit} binary fields`);
			} else {
				expect(parameters[`${field}BinaryField`]).toBe('data');
			}
			expect(binaryField.description).toContain('Max Wait');
		}
	});

	it('the source offers exactly URL and Binary Field, default url', () => {
		const sources = description.properties.filter(
			(p) => p.name.endsWith('Source') && ALL_MEDIA.includes(p.name.slice(0, -'Source'.length)),
		);
		expect(new Set(sources.map((p) => p.name))).toEqual(new Set(ALL_MEDIA.map((f) => `${f}Source`)));
		for (const source of sources) {
			expect(source.default).toBe('url');
			expect(source.options!.map((o) => (o as { value: string }).value).sort()).toEqual(['binary', 'url']);
		}
	});

	it('other operations show none of the new parameters', () => {
		for (const operation of ['getStatus', 'waitForCompletion', 'listArtifacts', 'download']) {
			const names = displayed({ operation }).properties.map((p) => p.name);
			for (const field of ALL_MEDIA) for (const name of newNames(field)) expect(names).not.toContain(name);
		}
	});
});

describe('parseBinaryFieldNames', () => {
	const model = videoModelOf('sd_2.5_discount')!;
	const parse = (value: unknown, limit = 3) =>
		parseBinaryFieldNames('referenceImagesBinaryField', model, value, limit, 'reference images');
	it.each([
		['', []],
		['  ', []],
		['data', ['data']],
		[' data , data_1 ', ['data', 'data_1']],
		['data,,data_1,', ['data', 'data_1']],
		[['a', ' b '], ['a', 'b']],
		[[], []],
	])('%j → %j', (value, names) => {
		expect(parse(value)).toEqual(names);
	});

	it('over the limit: names the field, the count, the limit and the model', () => {
		expect(() => parse('a, b, c, d')).toThrow(
			'referenceImagesBinaryField: 4 reference images given; allowed: at most 3 (model sd_2.5_discount)',
		);
		expect(() => parse('a, b', 1)).toThrow('2 reference images given; allowed: one binary field');
		expect(() => parse([1])).toThrow(InvalidVideoRequest);
	});
});

describe('mediaTypeOf: the kind of a frame or reference, by its bytes', () => {
	const hex = (text: string) => Buffer.from(text.replace(/ /g, ''), 'hex');
	const PNG = Buffer.concat([hex('89504e470d0a1a0a'), Buffer.alloc(32, 7)]);
	const MP4 = Buffer.concat([hex('00000018'), Buffer.from('ftypisom'), Buffer.alloc(32, 1)]);
	const M4A = Buffer.concat([hex('00000018'), Buffer.from('ftypM4A '), Buffer.alloc(32, 1)]);
	const WEBM = Buffer.concat([hex('1a45dfa3'), Buffer.alloc(32, 1)]);
	const MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(32, 1)]);
	const MP3_SYNC = Buffer.concat([hex('fffb9064'), Buffer.alloc(32, 1)]);
	const WAV = Buffer.concat([Buffer.from('RIFF'), hex('24000000'), Buffer.from('WAVEfmt '), Buffer.alloc(16, 1)]);
	const OGG = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(32, 1)]);
	const HTML = Buffer.from('<!doctype html><html><body>Sign in</body></html>');
	const UNKNOWN = Buffer.from([0, 1, 2, 3, 4, 5, 250, 251, 252]);

	it.each<[string, MediaKind, Buffer, string | undefined, string]>([
		['a PNG labelled generically', 'image', PNG, 'application/octet-stream', 'image/png'],
		['an mp4 as a video', 'video', MP4, 'video/mp4', 'video/mp4'],
		['a WebM as a video', 'video', WEBM, undefined, 'video/webm'],
		['unknown binary labelled video/x-flv', 'video', UNKNOWN, 'video/x-flv', 'video/x-flv'],
		['an mp3 with an ID3 tag', 'audio', MP3, undefined, 'audio/mpeg'],
		['an mp3 frame', 'audio', MP3_SYNC, 'audio/mpeg', 'audio/mpeg'],
		['a WAV', 'audio', WAV, undefined, 'audio/wav'],
		['an Ogg', 'audio', OGG, undefined, 'audio/ogg'],
		['an m4a', 'audio', M4A, undefined, 'audio/mp4'],
	])('accepted: %s', (_, kind, bytes, label, mimeType) => {
		expect(mediaTypeOf(kind, bytes, label)).toEqual({ mimeType });
	});

	it.each<[string, MediaKind, Buffer, string | undefined, string]>([
		['an HTML page labelled image/png', 'image', HTML, 'image/png', 'an HTML page'],
		['an mp4 as an image', 'image', MP4, 'image/png', 'a video/mp4 file'],
		['a PNG as a video', 'video', PNG, 'video/mp4', 'a image/png file'],
		['an mp3 as a video', 'video', MP3, 'video/mp4', 'a audio/mpeg file'],
		['an HTML page labelled video/mp4', 'video', HTML, 'video/mp4', 'an HTML page'],
		['an m4a as a video', 'video', M4A, 'video/mp4', 'a video/mp4 file'],
		['an mp4 video as an audio', 'audio', MP4, 'audio/mp4', 'a video/mp4 file'],
		['a PNG as an audio', 'audio', PNG, 'audio/mpeg', 'a image/png file'],
		['nothing', 'audio', Buffer.alloc(0), 'audio/mpeg', 'an empty body'],
		['unknown binary labelled for another kind', 'audio', UNKNOWN, 'video/mp4', 'unknown binary type'],
	])('refused: %s', (_, kind, bytes, label, what) => {
		const type = mediaTypeOf(kind, bytes, label);
		expect(type).toEqual({ notOfKind: expect.stringContaining(what) });
	});
});

describe('countAtMost: an input binary counted up to a limit, nothing kept', () => {
	const stream = (...sizes: number[]) => Readable.from(sizes.map((size) => Buffer.alloc(size)));
	it('the length when within the limit; undefined as soon as it is over', async () => {
		expect(await countAtMost(stream(3, 4), 7)).toBe(7);
		expect(await countAtMost(stream(3, 5), 7)).toBeUndefined();
		expect(await countAtMost(stream(), 7)).toBe(0);
	});
});

describe('isTemporaryUpload: a webhook upload n8n renames when the run ends (its link would die then)', () => {
	it.each([
		['filesystem-v2:workflows/wf1/executions/temp/binary_data/0b5f', true],
		['database:workflows/wf1/executions/temp/binary_data/0b5f', true],
		['filesystem-v2:workflows/wf1/executions/42/binary_data/0b5f', false],
		['filesystem:42_0b5f', false],
		['filesystem-v2:workflows/temporary/executions/42/binary_data/temp', false],
	])('%s → %s', (id, temporary) => {
		expect(isTemporaryUpload(id)).toBe(temporary);
	});
});
