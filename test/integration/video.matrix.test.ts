import { MODEL_FIELD_SPECS } from '../../nodes/GenGatewayVideo/model/fields';
import { userSetInput } from '../../nodes/GenGatewayVideo/model/parameters';
import { buildVideoRequest } from '../../nodes/GenGatewayVideo/model/requestBody';
import type { VideoInput } from '../../nodes/GenGatewayVideo/model/requestBody';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { INVALID_CASES, VALID_CASES } from '../support/videoCases';
import { runVideo } from '../support/videoRun';

/**
 * The validator and the service agree on every combination: what the node accepts the mock accepts, and what the node
 * rejects never reaches the service. The mock checks with its own zod schemas, so this is two implementations of the
 * matrix cross-checking each other.
 */
let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess();
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

async function submitDirect(body: unknown): Promise<{ status: number; message?: string }> {
	const response = await fetch(`${mock.url}/v1/tasks/vendor`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${mock.apiKey}`, 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
	});
	const json = (await response.json()) as { error?: { message?: string } };
	return { status: response.status, message: json.error?.message };
}

/** The input as a careless client would send it, without the node's checks and conversions. */
function naiveBody(model: string, input: VideoInput): Record<string, unknown> {
	const body: Record<string, unknown> = { model };
	if (input.prompt !== undefined) body.prompt = input.prompt;
	for (const spec of MODEL_FIELD_SPECS) {
		const value = input[spec.name as keyof VideoInput];
		if (value === undefined) continue;
		body[spec.apiName] =
			typeof value === 'string' && spec.name.startsWith('reference') ? value.split(/[\s,]+/).filter(Boolean) : value;
	}
	return body;
}

describe('every valid combination is accepted by the service', () => {
	it(`${VALID_CASES.length} request bodies built by the node are all accepted`, async () => {
		const rejected: string[] = [];
		for (const c of VALID_CASES) {
			const answer = await submitDirect(buildVideoRequest(c.model, c.input));
			if (answer.status !== 200) rejected.push(`${c.model} ${c.name}: ${answer.status} ${answer.message}`);
		}
		expect(rejected).toEqual([]);
		expect(await mock.submissions()).toBe(VALID_CASES.length);
	});

	it('the service rejects the same invalid combinations the node rejects locally', async () => {
		const accepted: string[] = [];
		for (const c of INVALID_CASES) {
			const answer = await submitDirect(naiveBody(c.model, c.input));
			if (answer.status < 400) accepted.push(`${c.model} ${c.name}`);
		}
		expect(accepted).toEqual([]);
	});
});

/** Parameters that take every field from the item, as a workflow feeding prompts from a sheet would. */
const fromItem = {
	operation: 'generate',
	model: '={{ $json.model }}',
	prompt: '={{ $json.prompt }}',
	...Object.fromEntries(MODEL_FIELD_SPECS.map((spec) => [spec.name, `={{ $json.${spec.name} }}`])),
	waitForCompletion: false,
};
const asItem = (c: { model: string; input: VideoInput }) => ({ model: c.model, ...c.input });

describe('through the node (model and fields from expressions)', () => {
	it('every valid combination is submitted as built by the validator', async () => {
		const result = await runVideo(mock, fromItem, { input: VALID_CASES.map(asItem), continueOnFail: true });
		const items = result.output();
		const errors = items.filter((item) => item.json.error).map((item) => item.json.error);
		expect(errors).toEqual([]);
		expect(items).toHaveLength(VALID_CASES.length);
		const sent = (await mock.log()).filter((e) => e.method === 'POST').map((e) => e.body);
		expect(sent).toHaveLength(VALID_CASES.length);
		// Submissions run concurrently: compare as sets. Every field is an expression here, so whatever it gives (not
		// blank) is the user's and is sent, also a value equal to a default.
		const source = { modelFixed: false, expressions: new Set(MODEL_FIELD_SPECS.map((spec) => spec.name)) };
		const expected = VALID_CASES.map((c) => JSON.stringify(buildVideoRequest(c.model, userSetInput(c.model, c.input, source))));
		expect(sent.map((b) => JSON.stringify(b)).sort()).toEqual(expected.sort());
	});

	// Every invalid case, also generate_audio set through an expression for a model without audio.
	const invalidThroughNode = INVALID_CASES;

	it('every invalid combination becomes an error item naming field and model, and nothing is sent', async () => {
		const result = await runVideo(mock, fromItem, { input: invalidThroughNode.map(asItem), continueOnFail: true });
		const items = result.output();
		expect(items).toHaveLength(invalidThroughNode.length);
		const wrong = items
			.map((item, index) => ({ error: String(item.json.error ?? ''), c: invalidThroughNode[index] }))
			.filter(({ error, c }) => !error.startsWith(`Invalid video request: ${c.field}: `) || (c.field !== 'model' && !error.includes(`(model ${c.model})`)));
		expect(wrong).toEqual([]);
		expect(await mock.log()).toEqual([]);
	});
});
