import type { IExecuteFunctions } from 'n8n-workflow';

import { describeValue, InvalidVideoRequest, isEmpty, parseBinaryFieldNames } from './fieldParsers';
import { binaryFieldParameter, isSetByUser, MODEL_FIELD_SPECS, sourceParameter } from './fields';
import type { FieldSource, MediaSpec, ModelFieldSpec } from './fields';
import { videoModelOf } from './matrix';
import type { VideoModelCapabilities } from './matrix';
import { resolveVideoModel } from './requestBody';
import type { VideoInput } from './requestBody';

/** How the values reached the node: which node parameters are expressions, and whether the model is a fixed choice. */
export interface InputSource {
	modelFixed: boolean;
	expressions: ReadonlySet<string>;
}

/** Typed values with a fixed model (as the editor stores them) unless told otherwise. */
const TYPED: InputSource = { modelFixed: true, expressions: new Set() };

/** Keeps, of the values n8n hands the node, only those the user set (fields.ts: isSetByUser). */
function keepUserSet(model: VideoModelCapabilities | undefined, raw: VideoInput, source: InputSource): VideoInput {
	const input: VideoInput = { prompt: raw.prompt };
	for (const spec of MODEL_FIELD_SPECS) {
		const how: FieldSource = { expression: source.expressions.has(spec.name), modelFixed: source.modelFixed };
		if (isSetByUser(spec, raw[spec.name], model, how)) input[spec.name] = raw[spec.name];
	}
	return input;
}

/** keepUserSet for a model as given (an id; unknown ones allowed, as buildVideoRequest names them). */
export function userSetInput(given: unknown, raw: VideoInput, source: InputSource = TYPED): VideoInput {
	return keepUserSet(videoModelOf(given), raw, source);
}

const isExpression = (value: unknown) => typeof value === 'string' && value.startsWith('=');

/**
 * Where the node's values come from, read from the node's own parameters (`this.getNode().parameters`: expressions
 * are kept there as written, "={{ … }}", while typed values are already merged with n8n's defaults).
 */
export function inputSource(ctx: IExecuteFunctions): InputSource {
	const parameters = ctx.getNode().parameters;
	return {
		modelFixed: !isExpression(parameters.model),
		expressions: new Set(MODEL_FIELD_SPECS.map((spec) => spec.name).filter((name) => isExpression(parameters[name]))),
	};
}

/**
 * Reads Generate's parameters for one item; hidden parameters read as '' (not set). The model is resolved here, once,
 * into its matrix row, after every parameter is read (an unknown model is an InvalidVideoRequest naming the ids).
 */
export function readVideoParameters(
	ctx: IExecuteFunctions,
	itemIndex: number,
	source: InputSource = inputSource(ctx),
): { model: VideoModelCapabilities; input: VideoInput } {
	const given = ctx.getNodeParameter('model', itemIndex);
	const raw: VideoInput = { prompt: ctx.getNodeParameter('prompt', itemIndex, '') };
	for (const spec of MODEL_FIELD_SPECS) raw[spec.name] = ctx.getNodeParameter(spec.name, itemIndex, '');
	const model = resolveVideoModel(given);
	return { model, input: keepUserSet(model, raw, source) };
}

/** A media field whose files come from binary fields of the input item: the field's spec and the field names. */
export interface BinarySource {
	spec: ModelFieldSpec & { media: MediaSpec };
	names: string[];
}

/**
 * The media fields of one item set to "Binary Field", with their binary field names (none: nothing to send). Their
 * URL parameters are then dropped from `input`: a URL left in a hidden field is not the user's choice.
 */
export function readBinarySources(
	ctx: IExecuteFunctions,
	itemIndex: number,
	model: VideoModelCapabilities,
	input: VideoInput,
): BinarySource[] {
	const sources: BinarySource[] = [];
	for (const spec of MODEL_FIELD_SPECS) {
		const media = spec.media;
		if (!media) continue;
		const source = ctx.getNodeParameter(sourceParameter(spec), itemIndex, 'url');
		if (source === 'url') continue;
		if (source !== 'binary') {
			throw new InvalidVideoRequest(
				sourceParameter(spec),
				model.id,
				`${describeValue(source)} is not allowed; allowed: url, binary`,
			);
		}
		delete input[spec.name];
		const field = binaryFieldParameter(spec);
		const value = ctx.getNodeParameter(field, itemIndex, '');
		if (isEmpty(value)) continue;
		if (!spec.supports(model)) {
			throw new InvalidVideoRequest(field, model.id, `this model does not support ${spec.what}; leave it empty`);
		}
		const names = parseBinaryFieldNames(field, model, value, media.limit(model), spec.what);
		if (names.length === 0) continue;
		sources.push({ spec: { ...spec, media }, names });
	}
	return sources;
}
