import type { IDataObject } from 'n8n-workflow';

import { describeValue, InvalidVideoRequest, isEmpty } from './fieldParsers';
import { MODEL_FIELD_SPECS } from './fields';
import { VIDEO_MODEL_IDS, videoModelOf } from './matrix';
import type { VideoModelCapabilities } from './matrix';

/**
 * Parameters → a validated request body for POST /v1/tasks/vendor, or an InvalidVideoRequest that names the field,
 * the model and what is allowed. Pure: no n8n, no I/O, so every rule of docs/service-interface.md §2.3 and §4.3 is
 * tested directly. The fields, their capabilities, API names and parsers come from the one field specification
 * (fields.ts).
 */

/** What the user set, by node parameter name (`prompt` and the fields of MODEL_FIELD_SPECS); undefined = not set. */
export type VideoInput = { prompt?: unknown } & Partial<Record<string, unknown>>;

/** The body sent: `model`, `prompt` and the API names of the specified fields. */
export type VideoRequestBody = IDataObject & { model: string; prompt: string };

/**
 * The one resolution of the model the user gave (an id, or a row already resolved) into its matrix row, or an
 * InvalidVideoRequest naming the allowed ids.
 */
export function resolveVideoModel(given: unknown): VideoModelCapabilities {
	const model = videoModelOf(given);
	if (!model) {
		throw new InvalidVideoRequest(
			'model',
			'',
			`${describeValue(given)} is not a model of the capability matrix; allowed: ${VIDEO_MODEL_IDS.join(', ')}`,
		);
	}
	return model;
}

/**
 * The request body for a model and the fields the user set: a field the user did not set is never sent, except a
 * required one, which takes the model's default from the matrix; a set field the model does not support is refused.
 */
export function videoRequestBody(model: VideoModelCapabilities, input: VideoInput): VideoRequestBody {
	if (typeof input.prompt !== 'string' || input.prompt.trim() === '') {
		throw new InvalidVideoRequest('prompt', model.id, 'is required and must be non-empty text');
	}
	const body: VideoRequestBody = { model: model.id, prompt: input.prompt };
	for (const spec of MODEL_FIELD_SPECS) {
		const value = input[spec.name];
		if (isEmpty(value)) {
			const fallback = spec.requiredDefault?.(model);
			if (fallback !== undefined) body[spec.apiName] = fallback as IDataObject[string];
			continue;
		}
		if (!spec.supports(model)) {
			throw new InvalidVideoRequest(spec.name, model.id, `this model does not support ${spec.what}; leave it empty`);
		}
		const parsed = spec.parse(value, model);
		if (parsed !== undefined) body[spec.apiName] = parsed as IDataObject[string];
	}
	return body;
}

/** videoRequestBody for a model as given (an id): what callers outside a run (tests, e2e) check a request with. */
export function buildVideoRequest(given: unknown, input: VideoInput): VideoRequestBody {
	return videoRequestBody(resolveVideoModel(given), input);
}
