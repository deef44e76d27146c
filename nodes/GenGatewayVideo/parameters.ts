import type { IExecuteFunctions } from 'n8n-workflow';

import { fieldDefaultFor, fieldDefaults, MODEL_FIELD_SPECS } from './fields';
import { findVideoModel } from './matrix';
import type { VideoInput } from './request';

/**
 * n8n fills every displayed parameter with its default, so "what the user set" has to be recovered: a value equal to
 * the model's own default is the service's default too and is not sent; a value a hidden variant filled in for a
 * model that lacks the field (possible when the model comes from an expression) is not the user's either.
 */
export function userSetInput(modelId: unknown, raw: VideoInput): VideoInput {
	const model = typeof modelId === 'string' ? findVideoModel(modelId.trim()) : undefined;
	if (!model) return raw;
	const input: VideoInput = { prompt: raw.prompt };
	const same = (a: unknown, b: unknown) =>
		a === b || (typeof a !== 'object' && typeof b !== 'object' && String(a) === String(b));
	for (const spec of MODEL_FIELD_SPECS) {
		const key = spec.name as keyof VideoInput;
		const value = raw[key];
		if (value === undefined) continue;
		if (spec.supports(model)) {
			const alwaysSent = key === 'duration' && model.duration.required;
			if (!alwaysSent && same(value, fieldDefaultFor(spec, model))) continue;
		} else if (fieldDefaults(spec).some((fallback) => same(value, fallback))) {
			continue;
		}
		input[key] = value;
	}
	return input;
}

/** Reads Generate's parameters for one item; hidden parameters read as '' (not set). */
export function readVideoParameters(ctx: IExecuteFunctions, itemIndex: number): { model: unknown; input: VideoInput } {
	const model = ctx.getNodeParameter('model', itemIndex);
	const raw: VideoInput = { prompt: ctx.getNodeParameter('prompt', itemIndex, '') };
	for (const spec of MODEL_FIELD_SPECS) {
		raw[spec.name as keyof VideoInput] = ctx.getNodeParameter(spec.name, itemIndex, '');
	}
	return { model, input: userSetInput(model, raw) };
}
