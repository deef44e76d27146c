/**
 * Saved workflows are a contract. Each folder of test/fixtures/workflows/ holds workflows as n8n's editor saved them
 * with one released version, and the requests and outputs they gave with that version's code. With the CURRENT code:
 * (a) each opens without issues (known type and version, no parameter the description no longer knows, no red
 *     warning, nothing changes when opened and saved again);
 * (b) each runs, through n8n-core's engine against the mock, to the same requests (method, path, body) and the same
 *     outputs (ids and times masked).
 * A failure means a saved workflow would break or change meaning: give the node a new version instead
 * (docs/upgrading.md). The fixtures are compared, never re-recorded here (scripts/saved-workflows.ts makes a NEW
 * version's folder).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { packageNodeTypeEntries } from '../harness/node-types';
import { spawnMockProcess } from '../mock/process';
import type { MockClient } from '../mock/process';
import { NEW_VERSION_HINT, fixtureVersions, loadFixtures, workflowProblems } from '../support/savedWorkflows/check';
import type { Fixture } from '../support/savedWorkflows/check';
import type { DescriptionMutation } from '../support/savedWorkflows/nodeTypes';
import { fixtureNodeTypes } from '../support/savedWorkflows/nodeTypes';
import { normalisedOutputs, normalisedRequests, runSaved } from '../support/savedWorkflows/run';
import { SPEC } from '../support/savedWorkflows/spec';

const packageVersion = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
const versions = fixtureVersions();

let mock: MockClient;
beforeAll(async () => {
	mock = await spawnMockProcess({ apiKey: 'saved-workflows-key-0123456789' });
});
afterAll(async () => await mock?.stop());

/** Runs a fixture and compares what reached the mock and what our nodes put out with what was recorded. */
async function replay(fixture: Fixture, mutate?: DescriptionMutation) {
	await mock.reset();
	const run = await runSaved(fixture.workflow, mock, fixture.expected.toolCalls, mutate);
	return {
		error: run.data.resultData.error?.message,
		requests: normalisedRequests(await mock.log()),
		outputs: normalisedOutputs(run, fixture.workflow.nodes),
	};
}

function withHint(what: string, check: () => void) {
	try {
		check();
	} catch (error) {
		(error as Error).message = `${what}\n${NEW_VERSION_HINT}\n\n${(error as Error).message}`;
		throw error;
	}
}

describe('saved-workflow fixtures', () => {
	it(`exist for the package's version (${packageVersion}), so each release leaves its saved workflows behind`, () => {
		expect(versions).toContain(packageVersion);
	});

	it('the authoring spec covers every node, every operation and every tool variant of the current code', () => {
		const used = new Set(SPEC.flatMap((workflow) => workflow.nodes.map((node) => `${node.type}:${String(node.parameters.operation ?? '')}`)));
		const types = new Set(SPEC.flatMap((workflow) => workflow.nodes.map((node) => node.type)));
		for (const { type, nodeType } of packageNodeTypeEntries()) {
			const name = type.slice(type.lastIndexOf('.') + 1);
			const description = 'nodeVersions' in nodeType ? nodeType.nodeVersions[nodeType.currentVersion].description : nodeType.description;
			const operation = description.properties.find((prop) => prop.name === 'operation');
			for (const option of (operation?.options ?? []) as Array<{ value: string }>) {
				const isDefault = option.value === operation?.default;
				expect([...used].some((key) => key === `${name}:${option.value}` || (isDefault && key === `${name}:`))).toBe(true);
			}
			if (description.usableAsTool) expect(types.has(`${name}Tool`)).toBe(true);
		}
	});
});

describe.each(versions)('saved workflows of %s', (version) => {
	const fixtures = loadFixtures(version);
	const nodeTypes = fixtureNodeTypes();

	it.each(fixtures.map((fixture) => [fixture.file, fixture] as const))('%s opens without issues', (_, fixture) => {
		withHint(`${version}/${fixture.file}.json does not open cleanly with the current code.`, () => {
			expect(workflowProblems(nodeTypes, fixture.workflow)).toEqual([]);
		});
	});

	it.each(fixtures.map((fixture) => [fixture.file, fixture] as const))('%s runs to the same requests and outputs', async (_, fixture) => {
		const got = await replay(fixture);
		withHint(`${version}/${fixture.file}.json no longer sends what it sent.`, () => {
			expect(got.requests).toEqual(fixture.expected.requests);
			expect(got.error).toBeUndefined();
		});
		withHint(`${version}/${fixture.file}.json no longer puts out what it did.`, () => {
			expect(got.outputs).toEqual(fixture.expected.outputs);
		});
	});
});

// Negative controls: the checks above fail on the kinds of change they exist for (the code is changed on purpose, in
// memory, for one check each).
describe('saved-workflow checks catch a change', () => {
	const oldest = () => loadFixtures(versions[0]);
	const fixture = (file: string) => oldest().find((candidate) => candidate.file === file)!;
	const onVideo = (change: (description: Parameters<DescriptionMutation>[1]) => void): DescriptionMutation => (type, description) => {
		if (type.endsWith('.genGatewayVideo')) change(description);
	};

	it('a renamed Video parameter: the workflow no longer opens cleanly', () => {
		const renamed = fixtureNodeTypes([], onVideo((description) => {
			for (const prop of description.properties) if (prop.name === 'binaryPropertyName') prop.name = 'outputField';
		}));
		const problems = workflowProblems(renamed, fixture('video-generate').workflow);
		expect(problems.join('\n')).toContain('"Fast Special into Field" (n8n-nodes-gen-gateway.genGatewayVideo v1): stored parameters the current description does not know or show: binaryPropertyName');
	});

	it('a renamed Video operation value: the stored one is flagged as not supported', () => {
		const renamed = fixtureNodeTypes([], onVideo((description) => {
			const operation = description.properties.find((prop) => prop.name === 'operation')!;
			for (const option of operation.options as Array<{ value: string }>) if (option.value === 'getStatus') option.value = 'status';
		}));
		expect(workflowProblems(renamed, fixture('video-tasks').workflow).join('\n')).toContain(
			'"Get Status" (n8n-nodes-gen-gateway.genGatewayVideo v1): the editor flags: operation: the value "getStatus" is not supported',
		);
	});

	it("a changed default (Video's model): what the untouched node sends changes", async () => {
		const got = await replay(fixture('video-generate'), onVideo((description) => {
			const model = description.properties.find((prop) => prop.name === 'model')!;
			model.default = 'gk_video';
		}));
		expect(got.requests).not.toEqual(fixture('video-generate').expected.requests);
		expect(got.requests[0]).toMatchObject({ method: 'POST', path: '/v1/tasks/vendor', body: { model: 'gk_video' } });
	});
});
