/**
 * Parameter fuzz for the Video node's Generate: thousands of generated parameter sets over all 11 models, judged by an
 * independent oracle (test/support/fuzzOracle.ts). The pure functions must build exactly the oracle's body for every
 * allowed set and reject every other one naming a field the oracle names, without ever crashing; the mock service must
 * accept every allowed body; and a few hundred sets run through the real node (expressions, Continue On Fail) must
 * reach the service exactly when allowed. Seeded: the seed is in the test names; FUZZ_SEED=<n> reproduces a run.
 */
import { userSetInput } from '../../nodes/GenGatewayVideo/model/parameters';
import { InvalidVideoRequest } from '../../nodes/GenGatewayVideo/model/fieldParsers';
import { buildVideoRequest } from '../../nodes/GenGatewayVideo/model/requestBody';
import type { VideoInput } from '../../nodes/GenGatewayVideo/model/requestBody';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { canonical, judge } from '../support/fuzzOracle';
import type { Verdict } from '../support/fuzzOracle';
import { createRandom, fuzzRuns, fuzzSeed } from '../support/fuzzRandom';
import { describeSet, FULL_SIZES, generateSet, LIGHT_SIZES } from '../support/fuzzValues';
import type { ParameterSet } from '../support/fuzzValues';
import { decodedExpression, encodeForItem, FUZZ_FIELDS } from '../support/fuzzItems';
import { findSecret, runVideo } from '../support/videoRun';

const SEED = fuzzSeed();
const PURE_RUNS = fuzzRuns(5000);
const NODE_RUNS = Math.min(PURE_RUNS, 300);
/** Allowed bodies sent straight to the mock (the sets are random, so the first ones are a fair sample). */
const MOCK_CHECKS = 1000;
const API_KEY = 'sentinel-key-fuzz-0f1e2d3c';

const random = createRandom(SEED);
const sets: ParameterSet[] = Array.from({ length: PURE_RUNS }, () => generateSet(random, FULL_SIZES));
const verdicts: Verdict[] = sets.map((set) => judge(set.model, set.raw));
const validBodies = verdicts.flatMap((verdict) => (verdict.valid ? [verdict.body] : []));
/** Values only an expression can produce reach the node as such (-0 is a valid seed; a text "-0" object is not). */
const HANDMADE: ParameterSet[] = [
	{ model: 'sd_2.0_special', raw: { prompt: 'negative zero seed', duration: 5, seed: -0 } },
	{ model: 'gk_video', raw: { prompt: 'NaN duration', duration: Number.NaN } },
	{ model: ' gk_1.5 ', raw: { prompt: 'infinite seed', seed: Number.POSITIVE_INFINITY } },
];
// Sets for the workflow run: the same generator, lighter (a whole run's input is one JSON document).
const nodeSets: ParameterSet[] = [
	...HANDMADE,
	...Array.from({ length: NODE_RUNS - HANDMADE.length }, () => generateSet(random, LIGHT_SIZES)),
];
// In the workflow run every field is an expression: whatever it gives (not blank) is the user's.
const nodeVerdicts: Verdict[] = nodeSets.map((set) => judge(set.model, set.raw, { expressions: true }));

let mock: MockClient;
beforeAll(async () => {
	// The seed goes to the log too, so a failing CI run can be replayed with FUZZ_SEED.
	process.stdout.write(`Video parameter fuzz: seed ${SEED} (FUZZ_SEED=${SEED} reproduces), ${PURE_RUNS} sets\n`);
	mock = await spawnMockProcess({ apiKey: API_KEY });
});
afterAll(async () => await mock?.stop());
beforeEach(async () => await mock.reset());

type Outcome = { built: Record<string, unknown> } | { invalid: InvalidVideoRequest } | { crashed: unknown };

function runPure(set: ParameterSet): Outcome {
	try {
		const input = userSetInput(set.model, set.raw as VideoInput);
		return { built: buildVideoRequest(set.model, input) as unknown as Record<string, unknown> };
	} catch (error) {
		return error instanceof InvalidVideoRequest ? { invalid: error } : { crashed: error };
	}
}

/** What is wrong with the node's handling of one set, or undefined when it agrees with the oracle. */
function disagreement(verdict: Verdict, outcome: Outcome): string | undefined {
	if ('crashed' in outcome) return `crashed: ${String(outcome.crashed)}`;
	if (verdict.valid) {
		if ('invalid' in outcome) return `rejected an allowed set: ${outcome.invalid.message}`;
		const [want, got] = [canonical(verdict.body), canonical(outcome.built)];
		return want === got ? undefined : `built ${got.slice(0, 300)}, the oracle wants ${want.slice(0, 300)}`;
	}
	if ('built' in outcome) return `accepted a set the oracle refuses (${verdict.fields.join(', ')})`;
	const { field, model, message } = outcome.invalid;
	if (!verdict.fields.includes(field)) return `named ${field}, the oracle refuses ${verdict.fields.join(', ')}: ${message}`;
	if (field !== 'model' && !message.endsWith(`(model ${model})`)) return `message does not name the model: ${message}`;
	return undefined;
}

const report = (problems: string[]) =>
	problems.length === 0 ? [] : [`seed ${SEED} (FUZZ_SEED=${SEED}): ${problems.length} problem(s)`, ...problems.slice(0, 8)];

describe(`Video parameter fuzz, seed ${SEED}`, () => {
	it(`${PURE_RUNS} generated sets: exactly the oracle's body, or a rejection naming a field the oracle names; no crash`, () => {
		const problems: string[] = [];
		sets.forEach((set, index) => {
			const problem = disagreement(verdicts[index], runPure(set));
			if (problem) problems.push(`#${index} ${problem}\n    set: ${describeSet(set).slice(0, 600)}`);
		});
		expect(report(problems)).toEqual([]);
		// The generator must keep exploring both sides and every model (a guard against a fuzz that tests nothing).
		expect(validBodies.length).toBeGreaterThan(PURE_RUNS * 0.25);
		expect(PURE_RUNS - validBodies.length).toBeGreaterThan(PURE_RUNS * 0.25);
		expect(new Set(validBodies.map((body) => body.model)).size).toBe(11);
	});

	it(`the service accepts every body the oracle allows (up to ${MOCK_CHECKS} of them)`, async () => {
		const distinct = [...new Map(validBodies.map((body) => [canonical(body), body])).values()].slice(0, MOCK_CHECKS);
		const rejected: string[] = [];
		const queue = [...distinct];
		await Promise.all(
			Array.from({ length: 8 }, async () => {
				for (let body = queue.shift(); body; body = queue.shift()) {
					const response = await fetch(`${mock.url}/v1/tasks/vendor`, {
						method: 'POST',
						headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
						body: JSON.stringify(body),
					});
					const answer = (await response.json()) as { error?: { message?: string } };
					if (response.status !== 200) rejected.push(`${response.status} ${answer.error?.message}: ${canonical(body).slice(0, 300)}`);
				}
			}),
		);
		expect(report(rejected)).toEqual([]);
		expect(await mock.submissions()).toBe(distinct.length);
	});

	it(`${NODE_RUNS} sets through the node in one run (model and fields from expressions): the service gets exactly the allowed ones`, async () => {
		const chosen = nodeSets;
		const parameters: Record<string, unknown> = { operation: 'generate', waitForCompletion: false };
		for (const field of FUZZ_FIELDS) parameters[field] = decodedExpression(field);
		const result = await runVideo(mock, parameters, { input: chosen.map(encodeForItem), continueOnFail: true });

		const items = result.output();
		expect(items).toHaveLength(NODE_RUNS);
		const problems: string[] = [];
		items.forEach((item, index) => {
			const verdict = nodeVerdicts[index];
			const set = describeSet(chosen[index]).slice(0, 400);
			if (verdict.valid) {
				if (item.json.status !== 'SUBMITTED') problems.push(`#${index} not submitted: ${String(item.json.error)}\n    set: ${set}`);
				else if (canonical(item.json.request) !== canonical(verdict.body)) problems.push(`#${index} sent ${canonical(item.json.request).slice(0, 300)}\n    set: ${set}`);
				return;
			}
			const error = String(item.json.error ?? '');
			const field = /^Invalid video request: (\w+): /.exec(error)?.[1];
			if (!field || !verdict.fields.includes(field)) {
				problems.push(`#${index} error "${error.slice(0, 200)}", the oracle refuses ${verdict.fields.join(', ')}\n    set: ${set}`);
			}
		});
		expect(report(problems)).toEqual([]);

		// The service saw exactly the allowed bodies (as a multiset: submissions run concurrently), all accepted.
		const posts = (await mock.log()).filter((entry) => entry.method === 'POST');
		const expected = nodeVerdicts.flatMap((verdict) => (verdict.valid ? [canonical(verdict.body)] : []));
		expect(posts.map((entry) => entry.status).filter((status) => status !== 200)).toEqual([]);
		expect(posts.map((entry) => canonical(entry.body)).sort()).toEqual(expected.sort());
		expect(findSecret(API_KEY, result.run, result.logs)).toEqual([]);
		expect(nodeVerdicts.slice(0, HANDMADE.length).map((verdict) => verdict.valid)).toEqual([true, false, false]);
		expect(expected.length).toBeGreaterThan(NODE_RUNS * 0.25);
	}, 60_000);
});
