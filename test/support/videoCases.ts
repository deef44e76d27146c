import { GK_RATIOS, SD_RATIOS, SDX_NSFW_C1_RATIOS, VIDEO_MODELS } from '../../nodes/GenGatewayVideo/model/matrix';
import type { VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';
import type { VideoInput } from '../../nodes/GenGatewayVideo/model/requestBody';

/**
 * Table of Video request cases over all 11 models: valid inputs (which the service must accept) and invalid ones
 * (which must be rejected locally, naming the field). Shared by the unit test of the validator and the integration
 * tests that check the mock service agrees and that nothing invalid is ever sent.
 */

export interface VideoCase {
	name: string;
	model: string;
	input: VideoInput;
	/** For invalid cases: the field the error must name. */
	field?: string;
}

const ALL_RATIOS = [...new Set<string>([...SD_RATIOS, ...GK_RATIOS, ...SDX_NSFW_C1_RATIOS])];
const ALL_RESOLUTIONS = [...new Set(VIDEO_MODELS.flatMap((m) => m.resolutions)), '8k'];
const urls = (n: number, kind = 'img') =>
	Array.from({ length: n }, (_, i) => `https://media.example.com/${kind}/${i}.bin`);

function validCases(m: VideoModelCapabilities): VideoCase[] {
	const base = { prompt: 'a lighthouse at dusk' };
	const cases: VideoCase[] = [
		{ name: 'minimal', model: m.id, input: { ...base, duration: m.duration.required ? m.duration.min : undefined } },
		{ name: 'max duration', model: m.id, input: { ...base, duration: m.duration.max } },
		{ name: 'duration as text', model: m.id, input: { ...base, duration: String(m.duration.min) } },
	];
	for (const ratio of m.aspectRatios) {
		cases.push({ name: `ratio ${ratio}`, model: m.id, input: { ...base, duration: m.duration.min, aspectRatio: ratio } });
	}
	for (const resolution of m.resolutions) {
		cases.push({ name: `resolution ${resolution}`, model: m.id, input: { ...base, duration: m.duration.max, resolution } });
	}
	const full: VideoInput = { ...base, duration: m.duration.max };
	if (m.seed) {
		cases.push({ name: 'seed number', model: m.id, input: { ...base, duration: m.duration.min, seed: 42 } });
		cases.push({ name: 'seed string', model: m.id, input: { ...base, duration: m.duration.min, seed: '1234567' } });
		full.seed = 7;
	}
	if (m.audio.supported) {
		cases.push({ name: 'audio off', model: m.id, input: { ...base, duration: m.duration.min, generateAudio: false } });
		cases.push({ name: 'audio as text', model: m.id, input: { ...base, duration: m.duration.min, generateAudio: 'true' } });
		full.generateAudio = !m.audio.default;
	}
	if (m.firstImage) {
		cases.push({ name: 'first frame', model: m.id, input: { ...base, duration: m.duration.min, firstImage: urls(1)[0] } });
		cases.push({ name: 'first frame array', model: m.id, input: { ...base, duration: m.duration.min, firstImage: urls(1) } });
		full.firstImage = urls(1, 'first')[0];
	}
	if (m.lastImage) {
		cases.push({ name: 'last frame', model: m.id, input: { ...base, duration: m.duration.min, lastImage: [urls(1)[0]] } });
		full.lastImage = urls(1, 'last')[0];
	}
	const r = m.references;
	cases.push({ name: 'images at limit (text list)', model: m.id, input: { ...base, duration: m.duration.min, referenceImages: urls(r.images).join(',\n ') } });
	full.referenceImages = urls(r.images);
	if (r.videos > 0) {
		cases.push({ name: 'videos at limit', model: m.id, input: { ...base, duration: m.duration.min, referenceVideos: urls(r.videos, 'vid') } });
		full.referenceVideos = urls(r.videos, 'vid').join(' ');
	}
	if (r.audios > 0) {
		cases.push({ name: 'audios at limit', model: m.id, input: { ...base, duration: m.duration.min, referenceAudios: urls(r.audios, 'aud') } });
		full.referenceAudios = urls(r.audios, 'aud');
	}
	cases.push({ name: 'every supported field', model: m.id, input: full });
	return cases;
}

function invalidCases(m: VideoModelCapabilities): VideoCase[] {
	const ok = { prompt: 'a lighthouse at dusk', duration: m.duration.min };
	const cases: VideoCase[] = [
		{ name: 'empty prompt', model: m.id, input: { ...ok, prompt: '   ' }, field: 'prompt' },
		{ name: 'missing prompt', model: m.id, input: { duration: m.duration.min }, field: 'prompt' },
		{ name: 'duration below range', model: m.id, input: { ...ok, duration: m.duration.min - 1 }, field: 'duration' },
		{ name: 'duration above range', model: m.id, input: { ...ok, duration: m.duration.max + 1 }, field: 'duration' },
		{ name: 'fractional duration', model: m.id, input: { ...ok, duration: m.duration.min + 0.5 }, field: 'duration' },
		{ name: 'duration not a number', model: m.id, input: { ...ok, duration: 'ten' }, field: 'duration' },
		{ name: 'file:// reference', model: m.id, input: { ...ok, referenceImages: 'file:///etc/passwd' }, field: 'referenceImages' },
		{ name: 'local path reference', model: m.id, input: { ...ok, referenceImages: '/tmp/a.png' }, field: 'referenceImages' },
		{ name: 'ftp reference', model: m.id, input: { ...ok, referenceImages: ['ftp://example.com/a.png'] }, field: 'referenceImages' },
		{ name: 'images over limit', model: m.id, input: { ...ok, referenceImages: urls(m.references.images + 1) }, field: 'referenceImages' },
		{ name: 'nested array reference', model: m.id, input: { ...ok, referenceImages: [[urls(1)[0]]] }, field: 'referenceImages' },
	];
	for (const ratio of ALL_RATIOS.filter((r) => !m.aspectRatios.includes(r))) {
		cases.push({ name: `ratio ${ratio} not allowed`, model: m.id, input: { ...ok, aspectRatio: ratio }, field: 'aspectRatio' });
	}
	for (const resolution of ALL_RESOLUTIONS.filter((r) => !m.resolutions.includes(r))) {
		cases.push({ name: `resolution ${resolution} not allowed`, model: m.id, input: { ...ok, resolution }, field: 'resolution' });
	}
	if (m.seed) {
		cases.push({ name: 'seed not an integer', model: m.id, input: { ...ok, seed: '4.2' }, field: 'seed' });
	} else {
		cases.push({ name: 'seed unsupported', model: m.id, input: { ...ok, seed: 42 }, field: 'seed' });
	}
	if (m.audio.supported) {
		cases.push({ name: 'audio not boolean', model: m.id, input: { ...ok, generateAudio: 'yes' }, field: 'generateAudio' });
	} else {
		cases.push({ name: 'audio unsupported', model: m.id, input: { ...ok, generateAudio: true }, field: 'generateAudio' });
	}
	if (m.firstImage) {
		cases.push({ name: 'two first frames', model: m.id, input: { ...ok, firstImage: urls(2) }, field: 'firstImage' });
	} else {
		cases.push({ name: 'first frame unsupported', model: m.id, input: { ...ok, firstImage: urls(1)[0] }, field: 'firstImage' });
	}
	if (m.lastImage) {
		cases.push({ name: 'two last frames', model: m.id, input: { ...ok, lastImage: urls(2) }, field: 'lastImage' });
	} else {
		cases.push({ name: 'last frame unsupported', model: m.id, input: { ...ok, lastImage: urls(1)[0] }, field: 'lastImage' });
	}
	for (const [field, limit, kind] of [
		['referenceVideos', m.references.videos, 'vid'],
		['referenceAudios', m.references.audios, 'aud'],
	] as const) {
		cases.push({
			name: limit > 0 ? `${field} over limit` : `${field} unsupported`,
			model: m.id,
			input: { ...ok, [field]: urls(limit + 1, kind) },
			field,
		});
	}
	return cases;
}

export const VALID_CASES: VideoCase[] = VIDEO_MODELS.flatMap(validCases);
export const INVALID_CASES: VideoCase[] = [
	...VIDEO_MODELS.flatMap(invalidCases),
	{ name: 'unknown model', model: 'sd_9.9_imaginary', input: { prompt: 'x', duration: 5 }, field: 'model' },
];
