import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import {
	isEmpty,
	parseBoolean,
	parseChoice,
	parseDuration,
	parseReferences,
	parseSeed,
	parseSingleUrl,
} from './fieldParsers';
import { VIDEO_MODELS } from './matrix';
import type { VideoModelCapabilities } from './matrix';
import type { MediaKind } from '../media/mediaKinds';

/**
 * The Generate operation's model-dependent fields, derived from the matrix. For each field, models that share the same
 * rules (option list, range, default, limit) share one n8n property; n8n's display options then show, for the selected
 * model, exactly one variant of each field the model supports and nothing else.
 */

/**
 * The one field specification: per field, the capability that allows it, its API name, its parser, the matrix default
 * sent when it is required and not set, and what its editor field looks like. The request body (requestBody.ts),
 * "set by the user" (isSetByUser below) and the editor's fields all derive from it: adding a capability touches this
 * list only.
 */
export interface ModelFieldSpec {
	/** Node parameter name: part of the node's public contract (workflows store it). */
	name: string;
	/** Key in the request body (docs/service-interface.md §2.3). */
	apiName: string;
	/** The capability of the matrix that allows the field. */
	supports(model: VideoModelCapabilities): boolean;
	/** What the model lacks, for "this model does not support …". */
	what: string;
	/** The value as n8n gives it → the value the body carries (undefined: nothing to send), or InvalidVideoRequest. */
	parse(value: unknown, model: VideoModelCapabilities): unknown;
	/** The matrix default sent when the model requires the field and the user did not set it. */
	requiredDefault?(model: VideoModelCapabilities): unknown;
	/** The property for this model (without name and displayOptions); models with equal results share a variant. */
	describe(model: VideoModelCapabilities): Omit<INodeProperties, 'name' | 'displayOptions'>;
	/**
	 * A field of URLs of media the service fetches: it may instead come from binary fields of the input item, sent as
	 * signed n8n URLs (`${name}Source`, `${name}BinaryField`: binarySourceProperties below).
	 */
	media?: MediaSpec;
}

export interface MediaSpec {
	kind: MediaKind;
	/** How the editor names the field in the source's name ("First Frame", "Reference Images"). */
	label: string;
	/** A list (references) rather than one file (a frame). */
	many: boolean;
	/** How many files the model takes. */
	limit(model: VideoModelCapabilities): number;
	/** What the binary data is, for the binary field's description ("the image the video starts from"). */
	what: string;
}

const optionsOf = (values: readonly string[]): INodePropertyOptions[] =>
	values.map((value) => ({ name: value, value }));

const urlListHint = 'One URL per line, or separated by commas or spaces; an expression may also give an array';

/** One of the model's values of a list of the matrix (no list: not supported). */
function choiceSpec(
	name: string,
	apiName: string,
	what: string,
	valuesOf: (model: VideoModelCapabilities) => readonly string[],
	describe: ModelFieldSpec['describe'],
): ModelFieldSpec {
	return {
		name,
		apiName,
		supports: (m) => valuesOf(m).length > 0,
		what,
		parse: (value, m) => parseChoice(name, m, value, valuesOf(m)),
		describe,
	};
}

/** The URL of the image the video starts from (`first_image`) or ends on (`last_image`). */
function frameSpec(which: 'first' | 'last', startsOrEnds: string): ModelFieldSpec {
	const name = which === 'first' ? 'firstImage' : 'lastImage';
	return {
		name,
		apiName: `${which}_image`,
		supports: (m) => m[name],
		what: `a ${which} frame`,
		parse: (value, m) => parseSingleUrl(name, m, value),
		media: {
			kind: 'image',
			label: `${which === 'first' ? 'First' : 'Last'} Frame`,
			many: false,
			limit: () => 1,
			what: `the image the video ${startsOrEnds}`,
		},
		describe: () => ({
			displayName: `${which === 'first' ? 'First' : 'Last'} Frame Image URL`,
			type: 'string',
			default: '',
			placeholder: `https://example.com/${which}.png`,
			description: `HTTP(S) URL of an image the video ${startsOrEnds} (one URL)`,
		}),
	};
}

const mediaKinds = { images: 'image', videos: 'video', audios: 'audio' } as const;

/** A list of reference URLs of one kind, up to the model's limit for it (a limit of 0: not supported). */
function referenceSpec(
	kind: keyof VideoModelCapabilities['references'],
	placeholder: string,
	noun: string,
): ModelFieldSpec {
	const title = kind.charAt(0).toUpperCase() + kind.slice(1);
	const name = `reference${title}`;
	const what = `reference ${kind}`;
	return {
		name,
		apiName: `reference_${kind}`,
		supports: (m) => m.references[kind] > 0,
		what,
		parse: (value, m) => parseReferences(name, m, value, m.references[kind], what),
		media: {
			kind: mediaKinds[kind],
			label: `Reference ${title}`,
			many: true,
			limit: (m) => m.references[kind],
			what: `reference ${noun}`,
		},
		describe: (m) => ({
			displayName: `Reference ${title} (Up to ${m.references[kind]})`,
			type: 'string',
			typeOptions: { rows: 2 },
			default: '',
			placeholder,
			description: `HTTP(S) URLs of up to ${m.references[kind]} reference ${noun}. ${urlListHint}.`,
		}),
	};
}

export const MODEL_FIELD_SPECS: readonly ModelFieldSpec[] = [
	{
		name: 'duration',
		apiName: 'duration',
		supports: () => true,
		what: 'a duration',
		parse: (value, m) => parseDuration('duration', m, value),
		requiredDefault: (m) => (m.duration.required ? m.duration.default : undefined),
		describe: (m) => ({
			displayName: 'Duration (Seconds)',
			type: 'number',
			required: m.duration.required,
			default: m.duration.default,
			typeOptions: { minValue: m.duration.min, maxValue: m.duration.max, numberPrecision: 0 },
			description: m.duration.required
				? `Length of the video, ${m.duration.min}–${m.duration.max} seconds (required for this model)`
				: `Length of the video, ${m.duration.min}–${m.duration.max} seconds. Left at ${m.duration.default}, it is ` +
					`not sent and the service applies its default (${m.duration.default} s).`,
		}),
	},
	choiceSpec('aspectRatio', 'aspect_ratio', 'an aspect ratio', (m) => m.aspectRatios, (m) => ({
		displayName: 'Aspect Ratio',
		type: 'options',
		default: '',
		options: [{ name: 'Service Default', value: '' }, ...optionsOf(m.aspectRatios)],
		description: 'Frame shape. "Service Default" sends nothing and lets the service choose.',
	})),
	choiceSpec('resolution', 'resolution', 'a resolution', (m) => m.resolutions, (m) => ({
		displayName: 'Resolution',
		type: 'options',
		default: m.defaultResolution,
		options: optionsOf(m.resolutions),
		description: `Output resolution. The default (${m.defaultResolution}) is the service's own and is not sent.`,
	})),
	{
		name: 'generateAudio',
		apiName: 'generate_audio',
		supports: (m) => m.audio.supported,
		what: 'audio generation',
		parse: (value, m) => parseBoolean('generateAudio', m, value),
		describe: (m) => ({
			displayName: 'Generate Audio',
			type: 'boolean',
			default: m.audio.default,
			description: `Whether the video gets a generated soundtrack (this model's default: ` +
				`${m.audio.default ? 'on' : 'off'})`,
		}),
	},
	{
		name: 'seed',
		apiName: 'seed',
		supports: (m) => m.seed,
		what: 'a seed',
		parse: (value, m) => parseSeed('seed', m, value),
		describe: () => ({
			displayName: 'Seed',
			type: 'string',
			default: '',
			placeholder: 'e.g. 42',
			description: 'An integer for repeatable results; empty lets the service pick one',
		}),
	},
	frameSpec('first', 'starts from'),
	frameSpec('last', 'ends on'),
	referenceSpec('images', 'https://example.com/a.png, https://example.com/b.png', 'images'),
	referenceSpec('videos', 'https://example.com/clip.mp4', 'videos'),
	referenceSpec('audios', 'https://example.com/voice.mp3', 'audio files'),
];

/** The default a field has in the variant shown for this model. */
function fieldDefaultFor(spec: ModelFieldSpec, model: VideoModelCapabilities): unknown {
	return spec.describe(model).default;
}

/** Every default any variant of the field has (the value n8n fills in when another model's variant was shown). */
function fieldDefaults(spec: ModelFieldSpec): unknown[] {
	return [
		...new Set(VIDEO_MODELS.filter((model) => spec.supports(model)).map((model) => fieldDefaultFor(spec, model))),
	];
}

/** How a field's value reached the node. */
export interface FieldSource {
	/** The node parameter is an expression: whatever it gives (not blank) is the user's. */
	expression: boolean;
	/** The Model parameter is a fixed choice, so n8n filled in only that model's variant of each field. */
	modelFixed: boolean;
}

const sameValue = (a: unknown, b: unknown) =>
	a === b || (typeof a !== 'object' && typeof b !== 'object' && String(a) === String(b));

/**
 * Whether the user set a field. n8n stores only values that differ from the default shown and fills in the default
 * at run time, so a typed value equal to a default cannot be told from "not set" and counts as not set: with a fixed
 * model the default of that model's variant; with the model from an expression n8n fills in the default of some
 * variant, so any variant's default. A field given as an expression is the user's whatever it gives (not blank):
 * that is also how to send a value equal to a default with the model from an expression.
 */
export function isSetByUser(
	spec: ModelFieldSpec,
	value: unknown,
	model: VideoModelCapabilities | undefined,
	source: FieldSource,
): boolean {
	if (isEmpty(value)) return false;
	if (source.expression) return true;
	const defaults =
		model && source.modelFixed && spec.supports(model) ? [fieldDefaultFor(spec, model)] : fieldDefaults(spec);
	return !defaults.some((fallback) => sameValue(value, fallback));
}

type PropertyBody = Omit<INodeProperties, 'name' | 'displayOptions'>;

/** One property per group of models for which `describe` gives the same property, shown for that group. */
function variantsOf(
	spec: ModelFieldSpec,
	name: string,
	describe: (model: VideoModelCapabilities) => PropertyBody,
	show: Record<string, string[]>,
): INodeProperties[] {
	const variants = new Map<string, { property: PropertyBody; models: string[] }>();
	for (const model of VIDEO_MODELS) {
		if (!spec.supports(model)) continue;
		const property = describe(model);
		const key = JSON.stringify(property);
		const variant = variants.get(key) ?? { property, models: [] };
		variant.models.push(model.id);
		variants.set(key, variant);
	}
	return [...variants.values()].map(
		({ property, models }) =>
			({ ...property, name, displayOptions: { show: { ...show, model: models } } }) as INodeProperties,
	);
}

export const sourceParameter = (spec: { name: string }) => `${spec.name}Source`;
export const binaryFieldParameter = (spec: { name: string }) => `${spec.name}BinaryField`;

/** Where a media field's files come from: URLs (as before: saved workflows read the default) or binary fields. */
function sourceProperty(media: MediaSpec): PropertyBody {
	return {
		displayName: `${media.label} Source`,
		type: 'options',
		default: 'url',
		options: [
			{
				name: 'Binary Field',
				value: 'binary',
				description: 'Binary data of the input item, served to the service by n8n through a signed URL',
			},
			{ name: 'URL', value: 'url', description: 'A URL the service fetches' },
		],
		description: `Where ${media.what} comes from`,
	};
}

/** The binary field(s) of the input item holding the file(s); their signed URLs last as long as Max Wait. */
function binaryFieldProperty(media: MediaSpec, model: VideoModelCapabilities): PropertyBody {
	const served =
		"n8n serves the file to the service through a signed URL valid for Max Wait (Options), so n8n's public URL " +
		'(N8N_WEBHOOK_URL; WEBHOOK_URL on n8n 1.x) must be reachable from the service';
	return media.many
		? {
				displayName: `${media.label} Binary Fields`,
				type: 'string',
				default: '',
				placeholder: 'e.g. data, data_1',
				description:
					`Names of up to ${media.limit(model)} binary fields of the input item holding ${media.what}, separated ` +
					`by commas. For each, ${served}.`,
			}
		: {
				displayName: `${media.label} Binary Field`,
				type: 'string',
				default: 'data',
				placeholder: 'e.g. data',
				description: `Name of the binary field of the input item holding ${media.what}; ${served}`,
			};
}

/** Generate's model-dependent properties: one per field and group of models with identical rules. */
export function modelFieldProperties(operation: string): INodeProperties[] {
	const properties: INodeProperties[] = [];
	for (const spec of MODEL_FIELD_SPECS) {
		const show = { operation: [operation] };
		const media = spec.media;
		if (!media) {
			properties.push(...variantsOf(spec, spec.name, (model) => spec.describe(model), show));
			continue;
		}
		const source = sourceParameter(spec);
		properties.push(
			...variantsOf(spec, source, () => sourceProperty(media), show),
			...variantsOf(spec, spec.name, (model) => spec.describe(model), { ...show, [source]: ['url'] }),
			...variantsOf(spec, binaryFieldParameter(spec), (model) => binaryFieldProperty(media, model), {
				...show,
				[source]: ['binary'],
			}),
		);
	}
	return properties;
}

/** One line per model for the model picker: what the matrix allows, so users choose knowingly. */
function modelSummary(model: VideoModelCapabilities): string {
	const refs = model.references;
	const parts = [
		`${model.duration.min}–${model.duration.max} s`,
		model.resolutions.join('/'),
		`refs ${refs.images}/${refs.videos || '-'}/${refs.audios || '-'} (images/videos/audios)`,
		model.firstImage ? (model.lastImage ? 'first+last frame' : 'first frame') : undefined,
		model.audio.supported ? `audio ${model.audio.default ? 'on' : 'off'} by default` : 'no audio',
		model.seed ? 'seed' : undefined,
	];
	return parts.filter(Boolean).join(', ');
}

/** A plain identifier: n8n's lint reads no other non-literal default (the first model of the matrix). */
const DEFAULT_MODEL = VIDEO_MODELS[0].id;

export const modelProperty = (operation: string): INodeProperties => ({
	displayName: 'Model',
	name: 'model',
	type: 'options',
	required: true,
	default: DEFAULT_MODEL,
	options: VIDEO_MODELS.map((model) => ({
		name: model.id,
		value: model.id,
		description: modelSummary(model),
	})),
	description:
		'The video model. The fields below follow its capabilities (durations, ratios, resolutions, references, frames, ' +
			'audio, seed).',
	displayOptions: { show: { operation: [operation] } },
});
