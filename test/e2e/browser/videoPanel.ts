// What the Video node's Generate panel shows for one model, read from the editor, and what the capability matrix says
// it should show. The expectation is written from the matrix's meaning (which fields a model has, its lists, its range
// and defaults), not from nodes/GenGatewayVideo/model/fields.ts, so a wrong derivation there shows up as a difference.
import type { Page } from 'playwright-core';

import type { VideoModelCapabilities } from '../../../nodes/GenGatewayVideo/model/matrix';
import { numberInput, readOptions, shownOption, switchState, typeNumber, visibleLabels, type ParameterLabel } from './editor';

/** The model-dependent fields, by parameter name, with the display name each has for a model (or none). */
const MODEL_FIELDS: ReadonlyArray<[name: string, label: (m: VideoModelCapabilities) => string | undefined]> = [
	['duration', () => 'Duration (Seconds)'],
	['aspectRatio', (m) => (m.aspectRatios.length ? 'Aspect Ratio' : undefined)],
	['resolution', (m) => (m.resolutions.length ? 'Resolution' : undefined)],
	['generateAudio', (m) => (m.audio.supported ? 'Generate Audio' : undefined)],
	['seed', (m) => (m.seed ? 'Seed' : undefined)],
	// Issue 32: each media field has its Source (URL by default) just above it.
	['firstImageSource', (m) => (m.firstImage ? 'First Frame Source' : undefined)],
	['firstImage', (m) => (m.firstImage ? 'First Frame Image URL' : undefined)],
	['lastImageSource', (m) => (m.lastImage ? 'Last Frame Source' : undefined)],
	['lastImage', (m) => (m.lastImage ? 'Last Frame Image URL' : undefined)],
	['referenceImagesSource', (m) => (m.references.images ? 'Reference Images Source' : undefined)],
	['referenceImages', (m) => (m.references.images ? `Reference Images (Up to ${m.references.images})` : undefined)],
	['referenceVideosSource', (m) => (m.references.videos ? 'Reference Videos Source' : undefined)],
	['referenceVideos', (m) => (m.references.videos ? `Reference Videos (Up to ${m.references.videos})` : undefined)],
	['referenceAudiosSource', (m) => (m.references.audios ? 'Reference Audios Source' : undefined)],
	['referenceAudios', (m) => (m.references.audios ? `Reference Audios (Up to ${m.references.audios})` : undefined)],
];

export const MODEL_FIELD_NAMES: readonly string[] = MODEL_FIELDS.map(([name]) => name);

export interface OptionsField {
	/** What the closed input shows (the default after a model switch). */
	shown: string;
	/** The dropdown's items, in order. */
	options: string[];
	/** The item the dropdown marks as selected. */
	selected: string | undefined;
}

export interface DurationField {
	/** The value shown after the model switch (the model's default). */
	shown: number;
	/** Bounds the input carries. */
	min: number;
	max: number;
	/**
	 * What the input kept after typing min - 1, min, max, max + 1 in that order, as "typed→kept": n8n 1.x clamps a value
	 * outside the bounds to the nearest bound, 2.x clamps below the minimum and refuses above the maximum (keeping the
	 * max typed just before), so the bounds enforced read the same on both.
	 */
	typed: string[];
}

export interface VideoPanel {
	/** Display names of the model-dependent fields shown, in order. */
	fields: string[];
	duration: DurationField;
	aspectRatio?: OptionsField;
	resolution?: OptionsField;
	/** The Generate Audio switch (undefined: not shown). */
	generateAudio?: boolean;
}

/** The panel the matrix calls for. */
export function expectedPanel(model: VideoModelCapabilities): VideoPanel {
	const { min, max } = model.duration;
	return {
		fields: MODEL_FIELDS.map(([, label]) => label(model)).filter((label): label is string => label !== undefined),
		duration: {
			shown: model.duration.default,
			min,
			max,
			typed: [`${min - 1}→${min}`, `${min}→${min}`, `${max}→${max}`, `${max + 1}→${max}`],
		},
		aspectRatio: model.aspectRatios.length
			? { shown: 'Service Default', options: ['Service Default', ...model.aspectRatios], selected: 'Service Default' }
			: undefined,
		resolution: model.resolutions.length
			? { shown: model.defaultResolution, options: [...model.resolutions], selected: model.defaultResolution }
			: undefined,
		generateAudio: model.audio.supported ? model.audio.default : undefined,
	};
}

async function readOptionsField(page: Page, name: string): Promise<OptionsField> {
	const shown = await shownOption(page, name);
	const options = await readOptions(page, name);
	return { shown, options: options.map((o) => o.name), selected: options.find((o) => o.selected)?.name };
}

/**
 * Reads the duration field, then probes the bounds n8n enforces by typing at and past them, then types the default
 * back (n8n then stores no value of its own, so the next model's panel shows that model's default again).
 */
async function readDuration(page: Page): Promise<DurationField> {
	const before = await numberInput(page, 'duration');
	const typed: string[] = [];
	for (const value of [before.min - 1, before.min, before.max, before.max + 1]) {
		typed.push(`${value}→${await typeNumber(page, 'duration', String(value))}`);
	}
	const restored = await typeNumber(page, 'duration', before.value);
	if (restored !== before.value) throw new Error(`duration: typed ${before.value} back, the input kept ${restored}`);
	return { shown: Number(before.value), min: before.min, max: before.max, typed };
}

/** Splits the shown labels into the model-dependent fields and the rest (which must not depend on the model). */
export function splitLabels(labels: ParameterLabel[]): { fields: string[]; others: string[] } {
	return {
		fields: labels.filter((l) => MODEL_FIELD_NAMES.includes(l.name)).map((l) => l.label),
		others: labels.filter((l) => !MODEL_FIELD_NAMES.includes(l.name)).map((l) => `${l.name}: ${l.label}`),
	};
}

/** Reads the whole panel for the selected model; `others` are the labels of every other parameter shown. */
export async function readVideoPanel(page: Page): Promise<{ panel: VideoPanel; others: string[] }> {
	const { fields, others } = splitLabels(await visibleLabels(page));
	const panel: VideoPanel = {
		fields,
		duration: await readDuration(page),
		aspectRatio: fields.includes('Aspect Ratio') ? await readOptionsField(page, 'aspectRatio') : undefined,
		resolution: fields.includes('Resolution') ? await readOptionsField(page, 'resolution') : undefined,
		generateAudio: await switchState(page, 'generateAudio'),
	};
	return { panel, others };
}
