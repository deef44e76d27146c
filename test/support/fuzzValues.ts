import { GK_RATIOS, SD_RATIOS, SDX_NSFW_C1_RATIOS, VIDEO_MODELS } from '../../nodes/GenGatewayVideo/model/matrix';
import type { VideoModelCapabilities } from '../../nodes/GenGatewayVideo/model/matrix';
import type { RawParameters } from './fuzzOracle';
import type { Random } from './fuzzRandom';

/**
 * Generated Video parameter sets: a model and raw field values as n8n could hand them to the node (typed in, or
 * produced by an expression): mostly plausible, sometimes wrong, sometimes odd (objects, NaN, huge or exotic text,
 * nested arrays, very long URL lists). What is valid is decided by the oracle, never by the generator.
 */

export interface ParameterSet {
	model: unknown;
	raw: RawParameters;
}

/** How big the biggest values get: the pure tests take the full size, runs through a workflow a lighter one. */
export interface Sizes {
	/** Longest odd text, in characters. */
	text: number;
	/** Longest URL list, in entries. */
	list: number;
}

export const FULL_SIZES: Sizes = { text: 200_000, list: 5_000 };
export const LIGHT_SIZES: Sizes = { text: 20_000, list: 500 };

let sizes: Sizes = FULL_SIZES;

/** Values that only an expression can produce (JSON cannot carry them). */
export const ODD_NUMBERS = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0] as const;

type Intent = 'absent' | 'prefill' | 'good' | 'bad';

const ALL_RATIOS = [...new Set<string>([...SD_RATIOS, ...GK_RATIOS, ...SDX_NSFW_C1_RATIOS])];
const ALL_RESOLUTIONS = [...new Set(VIDEO_MODELS.flatMap((m) => m.resolutions)), '8k', '360p'];

/** Shapes that fit no field: the "odd" inputs every field must survive. */
function oddValue(r: Random): unknown {
	return r.pick<() => unknown>([
		() => null,
		() => r.pick(ODD_NUMBERS),
		() => r.pick([true, false, 0, 1, 12.5, 1e21, Number.MAX_SAFE_INTEGER + 2]),
		() => ({}),
		() => ({ value: 'https://example.com/a.png', nested: { deep: [1, 2] } }),
		() => [],
		() => [[]],
		() => [null],
		() => [[`https://example.com/nested.png`]],
		() => [1, 'two', { three: 3 }],
		() => 'x'.repeat(r.int(1000, sizes.text)),
		() => '🎬'.repeat(r.int(1, 500)),
		() => '\u0000\u202e\u200b',
		() => r.pick([' ', '\t\n', '\u00a0', '']),
		() => '={{ $json.x }}',
		() => '<script>alert(1)</script>',
	])();
}

const GOOD_URLS = [
	'https://media.example.com/img/0.png',
	'http://127.0.0.1:8080/clip.mp4',
	'HTTPS://EXAMPLE.COM/UPPER.PNG',
	'https://例え.jp/画像.png',
	'http://[::1]:9000/v.mp4',
	'https://example.com/a.png?q=1&r=%20#frag',
	'  https://example.com/padded.png  ',
	'https://cdn.example.com/w_200,h_100/commas.png',
];

const BAD_URLS = [
	'file:///etc/passwd',
	'/tmp/a.png',
	'C:\\images\\a.png',
	'ftp://example.com/a.png',
	'https://',
	'http//example.com/a.png',
	'example.com/a.png',
	'javascript:alert(1)',
	'data:image/png;base64,iVBORw0KGgo=',
	'https://exa mple.com/x.png',
	'mailto:someone@example.com',
	'ws://example.com/socket',
	'https://user:secret@example.com/x.mp3',
	'http:example.com/no-slashes.png',
	'https://example.com\\a.png',
];

function goodUrl(r: Random): string {
	if (r.chance(0.02)) return `https://example.com/${'a'.repeat(4096 - 'https://example.com/'.length)}`;
	return r.chance(0.5) ? `https://media.example.com/${r.int(0, 99999)}.png` : r.pick(GOOD_URLS);
}

function badUrl(r: Random): unknown {
	if (r.chance(0.05)) return `https://example.com/${'a'.repeat(4097 - 'https://example.com/'.length)}`;
	return r.chance(0.85) ? r.pick(BAD_URLS) : oddValue(r);
}

/** A URL list as a user or an expression gives it: an array, or text with mixed separators. */
function urlList(r: Random, count: number, bad: boolean): unknown {
	const urls: unknown[] = Array.from({ length: count }, () => goodUrl(r).trim());
	if (bad && count > 0) urls[r.int(0, count - 1)] = badUrl(r);
	if (r.chance(0.5) && urls.every((url) => typeof url === 'string' && !/[\s,]/.test(url.trim()))) {
		const separators = [', ', ',', '\n', ' ', ' ,\n\t', '\r\n'];
		return urls.map((url) => (url as string).trim()).join(r.pick(separators)) + (r.chance(0.2) ? ',' : '');
	}
	return urls;
}

function prompt(r: Random, intent: Intent): unknown {
	if (intent === 'bad') return r.pick<unknown>(['', '   ', '\n\t', null, 42, ['a prompt'], { text: 'a prompt' }, true, Number.NaN]);
	return r.pick<() => unknown>([
		() => 'a lighthouse at dusk, cinematic',
		() => `item ${r.int(0, 1e6)}: a fox in fresh snow`,
		() => '夕暮れの灯台 🌅 — «кинематографично» \u202eRTL\u202c',
		() => `long ${'many words '.repeat(r.int(100, sizes.text / 40))}`,
		() => '  padded prompt with [[markers]] and {{ braces }}  ',
		() => '\u200bzero-width start',
	])();
}

function duration(r: Random, m: VideoModelCapabilities, intent: Intent): unknown {
	if (intent === 'prefill') return m.duration.default;
	if (intent === 'good') {
		const seconds = r.int(m.duration.min, m.duration.max);
		return r.pick<unknown>([seconds, String(seconds), ` ${seconds} `, `00${seconds}`, seconds + 0.0]);
	}
	return r.pick<unknown>([
		m.duration.min - 1,
		m.duration.max + 1,
		0,
		-5,
		1e9,
		m.duration.min + 0.5,
		`${m.duration.min}.5`,
		'ten',
		'+7',
		'1e1',
		'0x10',
		'99999999999999999999999',
		'',
		null,
		[m.duration.min],
		oddValue(r),
	]);
}

function choice(r: Random, allowed: readonly string[], everything: readonly string[], prefill: string, intent: Intent): unknown {
	if (intent === 'prefill') return prefill;
	if (intent === 'good') return r.pick(allowed);
	const wrong = everything.filter((value) => !allowed.includes(value));
	return r.pick<unknown>([
		...(wrong.length > 0 ? [r.pick(wrong)] : []),
		`${r.pick(allowed)} `,
		r.pick(allowed).toUpperCase() + 'X',
		'16/9',
		720,
		[r.pick(allowed)],
		oddValue(r),
	]);
}

function seed(r: Random, intent: Intent): unknown {
	if (intent === 'prefill') return '';
	if (intent === 'good') {
		return r.pick<unknown>([
			r.int(0, 2 ** 31),
			String(r.int(-1000, 1e9)),
			' 42 ',
			'-0',
			String(Number.MAX_SAFE_INTEGER),
			-Number.MAX_SAFE_INTEGER,
		]);
	}
	// Beyond 2^53 - 1 a seed cannot be sent exactly: refused.
	return r.pick<unknown>(['4.2', 4.2, 'abc', '1e3', '9'.repeat(r.int(16, 65)), 2 ** 60, '--1', oddValue(r)]);
}

function audio(r: Random, m: VideoModelCapabilities, intent: Intent): unknown {
	if (intent === 'prefill') return m.audio.default;
	if (intent === 'good') return r.pick<unknown>([true, false, 'true', 'false']);
	return r.pick<unknown>(['yes', 'TRUE', ' true', 1, 0, 'on', oddValue(r)]);
}

function frame(r: Random, intent: Intent): unknown {
	if (intent === 'prefill') return '';
	if (intent === 'good') return r.chance(0.7) ? goodUrl(r) : [goodUrl(r)];
	return r.pick<unknown>([badUrl(r), [goodUrl(r), goodUrl(r)], [badUrl(r)], [[goodUrl(r)]], { url: goodUrl(r) }]);
}

function references(r: Random, limit: number, intent: Intent): unknown {
	if (intent === 'prefill') return '';
	if (intent === 'good') return urlList(r, r.int(limit > 0 ? 1 : 0, Math.max(limit, 1)), false);
	return r.pick<() => unknown>([
		() => urlList(r, limit + r.int(1, 3), false),
		() => urlList(r, r.int(1, Math.max(1, limit)), true),
		() => urlList(r, r.int(sizes.list / 10, sizes.list), false),
		() => [[goodUrl(r)]],
		() => oddValue(r),
	])();
}

function pickModel(r: Random): { value: unknown; caps: VideoModelCapabilities } {
	const caps = r.pick(VIDEO_MODELS);
	const value = r.weighted<() => unknown>([
		[88, () => caps.id],
		[4, () => ` ${caps.id}\n`],
		[3, () => r.pick(['sd_9.9_imaginary', caps.id.toUpperCase(), `${caps.id}_v2`, ''])],
		[5, () => r.pick<unknown>([null, 5, { id: caps.id }, [caps.id], Number.NaN, true])],
	])();
	return { value, caps };
}

const FIELDS = [
	'duration',
	'aspectRatio',
	'resolution',
	'seed',
	'generateAudio',
	'firstImage',
	'lastImage',
	'referenceImages',
	'referenceVideos',
	'referenceAudios',
] as const;

/**
 * One parameter set. About half aim to be valid (every field absent, pre-filled or well chosen); the rest break one
 * to three fields. A field a model lacks is still filled sometimes: expressions do not know what a model supports.
 */
export function generateSet(r: Random, size: Sizes = FULL_SIZES): ParameterSet {
	sizes = size;
	const { value: model, caps } = pickModel(r);
	const breaking = new Set<string>();
	if (r.chance(0.5)) {
		const count = r.int(1, 3);
		for (let i = 0; i < count; i++) breaking.add(r.pick(['prompt', ...FIELDS]));
	}
	// A required duration is left out only now and then: that alone would make most sets invalid.
	const intent = (field: string): Intent =>
		breaking.has(field)
			? 'bad'
			: r.weighted<Intent>([[field === 'duration' && caps.duration.required ? 3 : 35, 'absent'], [20, 'prefill'], [45, 'good']]);

	const raw: RawParameters = { prompt: prompt(r, breaking.has('prompt') ? 'bad' : 'good') };
	for (const field of FIELDS) {
		const wanted = intent(field);
		if (wanted === 'absent') continue;
		// A field of a capability the model lacks is filled only rarely unless it is meant to break the set.
		const value = {
			duration: () => duration(r, caps, wanted),
			aspectRatio: () => choice(r, caps.aspectRatios, ALL_RATIOS, '', wanted),
			resolution: () => choice(r, caps.resolutions, ALL_RESOLUTIONS, caps.defaultResolution, wanted),
			seed: () => (caps.seed || wanted !== 'good' ? seed(r, wanted) : ''),
			generateAudio: () => (caps.audio.supported || wanted !== 'good' ? audio(r, caps, wanted) : caps.audio.default),
			firstImage: () => (caps.firstImage || wanted !== 'good' ? frame(r, wanted) : ''),
			lastImage: () => (caps.lastImage || wanted !== 'good' ? frame(r, wanted) : ''),
			referenceImages: () => references(r, caps.references.images, wanted),
			referenceVideos: () => (caps.references.videos > 0 || wanted !== 'good' ? references(r, caps.references.videos, wanted) : ''),
			referenceAudios: () => (caps.references.audios > 0 || wanted !== 'good' ? references(r, caps.references.audios, wanted) : ''),
		}[field]();
		raw[field] = value;
	}
	return { model, raw };
}

/** A readable, JSON-safe description of a set (odd numbers and huge strings shown as tags), for failure messages. */
export function describeSet(set: ParameterSet): string {
	return JSON.stringify(set, (_key, value: unknown) => {
		if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) return `<${Object.is(value, -0) ? '-0' : value}>`;
		if (value === undefined) return '<undefined>';
		if (typeof value === 'string' && value.length > 200) return `<${value.length} chars: ${value.slice(0, 60)}…>`;
		if (Array.isArray(value) && value.length > 20) return `<array of ${value.length}>`;
		return value;
	});
}
