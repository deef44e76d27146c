import type { INodeProperties } from 'n8n-workflow';

import { timeoutOption } from './timeoutOption';

/**
 * The options the Chat node and the Chat Model both have: one name, type and range each, sent with one meaning.
 * Saved workflows are a contract, so each node keeps the default it was saved with (the Chat Model's temperature is
 * 0.7, the Chat node's 1) and its own words; they stand side by side here. Maximum Number of Tokens is not shared:
 * the Chat Model's -1 means "the service decides", which the Chat node has no value for.
 */

type TextNode = 'chat' | 'chatModel';

interface Variant {
	displayName: string;
	default: number;
	numberPrecision: number;
	description: string;
}

interface Sampling {
	maxValue: number;
	variants: Record<TextNode, Variant>;
}

const SAMPLING: Record<'temperature' | 'topP', Sampling> = {
	// Sent as `temperature`.
	temperature: {
		maxValue: 2,
		variants: {
			chat: {
				displayName: 'Temperature',
				default: 1,
				numberPrecision: 2,
				description: 'Randomness of the answer: lower is more focused, higher is more varied',
			},
			chatModel: {
				displayName: 'Sampling Temperature',
				default: 0.7,
				numberPrecision: 1,
				description: 'Controls randomness: lower is more focused and deterministic, higher more varied',
			},
		},
	},
	// Sent as `top_p`.
	topP: {
		maxValue: 1,
		variants: {
			chat: {
				displayName: 'Top P',
				default: 1,
				numberPrecision: 2,
				description: 'Nucleus sampling: only tokens within this probability mass are considered',
			},
			chatModel: {
				displayName: 'Top P',
				default: 1,
				numberPrecision: 1,
				description:
					'Nucleus sampling: 0.5 means half of all likelihood-weighted options are considered. Change this or the ' +
						'temperature, not both.',
			},
		},
	},
};

/** Temperature or Top P as the node shows it. */
export function samplingOption(name: keyof typeof SAMPLING, node: TextNode): INodeProperties {
	const { maxValue, variants } = SAMPLING[name];
	const { displayName, default: value, numberPrecision, description } = variants[node];
	return {
		displayName,
		name,
		type: 'number',
		typeOptions: { minValue: 0, maxValue, numberPrecision },
		default: value,
		description,
	};
}

/** The paid call's Timeout (shared/descriptions/timeoutOption.ts), in the Chat Model's words for its calls. */
export function textTimeoutOption(node: TextNode): INodeProperties {
	if (node === 'chat') return timeoutOption;
	return {
		...timeoutOption,
		description:
			'Seconds to wait for an answer, and for a streamed answer between two pieces. The call is paid: when the time ' +
				'runs out the outcome is unknown and the call is not resent.',
	};
}
