/** The two promises a saved workflow holds the current code to (used by test/integration/savedWorkflows.test.ts). */
import { isDeepStrictEqual } from 'node:util';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

import type { HarnessNodeTypes } from '../../harness/node-types';
import { descriptionAt, openedParameters, parameterIssues, reSaved, unsupportedValues } from './editor';
import type { SavedNode, SavedWorkflow } from './editor';
import { FOREIGN_TYPES, isOurs } from './nodeTypes';
import type { Expected } from './run';

export const FIXTURES = path.resolve(__dirname, '../../fixtures/workflows');

export const NEW_VERSION_HINT =
	'A saved workflow would change meaning or break: give the node a new version instead (n8n versioned nodes: ' +
	'`version: [1, 2]` with the old behaviour kept for typeVersion 1; see docs/upgrading.md). Never re-record a released ' +
	"version's fixtures.";

export interface Fixture {
	version: string;
	file: string;
	workflow: SavedWorkflow;
	expected: Expected;
}

const semver = (v: string) => v.split(/[.-]/).map((part) => (/^\d+$/.test(part) ? Number(part) : part));
const bySemver = (a: string, b: string) => {
	const [x, y] = [semver(a), semver(b)];
	for (let i = 0; i < Math.max(x.length, y.length); i++) {
		if (x[i] === y[i]) continue;
		if (x[i] === undefined) return -1;
		if (y[i] === undefined) return 1;
		return typeof x[i] === 'number' && typeof y[i] === 'number' ? (x[i] as number) - (y[i] as number) : String(x[i]).localeCompare(String(y[i]));
	}
	return 0;
};

/** Every released version's fixture folder, oldest first. */
export function fixtureVersions(): string[] {
	if (!existsSync(FIXTURES)) return [];
	return readdirSync(FIXTURES, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.map((entry) => entry.name)
		.sort(bySemver);
}

/** The workflows of one version folder, each with its recorded requests and outputs. */
export function loadFixtures(version: string): Fixture[] {
	const folder = path.join(FIXTURES, version);
	return readdirSync(folder)
		.filter((name) => name.endsWith('.json') && !name.endsWith('.expected.json'))
		.sort()
		.map((name) => {
			const file = name.replace(/\.json$/, '');
			const read = <T>(suffix: string) => JSON.parse(readFileSync(path.join(folder, `${file}${suffix}`), 'utf8')) as T;
			return { version, file, workflow: read<SavedWorkflow>('.json'), expected: read<Expected>('.expected.json') };
		});
}

/** Stored parameter paths (`options.maxWait`, `messages.values[0].content`) that the opened parameters lack. */
function lostPaths(stored: unknown, opened: unknown, at = ''): string[] {
	if (stored === null || typeof stored !== 'object') return [];
	if (opened === null || typeof opened !== 'object') return [at];
	const lost: string[] = [];
	for (const [key, value] of Object.entries(stored)) {
		const here = Array.isArray(stored) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
		if (!(key in (opened as object))) lost.push(here);
		else lost.push(...lostPaths(value, (opened as Record<string, unknown>)[key], here));
	}
	return lost;
}

/**
 * What the editor of the current code would make of one saved node: unknown type or version, a stored parameter it
 * no longer knows or shows, a red warning, or stored parameters that change when the workflow is opened and saved.
 */
export function nodeProblems(nodeTypes: HarnessNodeTypes, node: SavedNode): string[] {
	if (!isOurs(node.type)) {
		return FOREIGN_TYPES[node.type]?.includes(node.typeVersion)
			? []
			: [`${node.type} ${node.typeVersion} is not one of n8n's nodes the fixtures may use (nodeTypes.ts FOREIGN_TYPES)`];
	}
	let description;
	try {
		description = descriptionAt(nodeTypes, node);
	} catch (error) {
		return [`unknown type or version: ${(error as Error).message}`];
	}
	const problems: string[] = [];
	const lost = lostPaths(node.parameters, openedParameters(description, node));
	if (lost.length) problems.push(`stored parameters the current description does not know or show: ${lost.join(', ')}`);
	const issues = parameterIssues(description, node);
	if (issues.length) problems.push(`the editor flags: ${issues.join('; ')}`);
	const unsupported = unsupportedValues(description, node);
	if (unsupported.length) problems.push(`the editor flags: ${unsupported.join('; ')}`);
	const saved = reSaved(description, node);
	if (!isDeepStrictEqual(saved, node.parameters)) {
		problems.push(`opened and saved again, the parameters change:\n  stored: ${JSON.stringify(node.parameters)}\n  now:    ${JSON.stringify(saved)}`);
	}
	const wanted = (description.credentials ?? []).map((credential) => credential.name).sort();
	const stored = Object.keys(node.credentials ?? {}).sort();
	if (!isDeepStrictEqual(wanted, stored)) problems.push(`credentials: stored ${stored.join(', ')}, the node wants ${wanted.join(', ')}`);
	return problems;
}

export function workflowProblems(nodeTypes: HarnessNodeTypes, workflow: SavedWorkflow): string[] {
	return workflow.nodes.flatMap((node) => nodeProblems(nodeTypes, node).map((problem) => `"${node.name}" (${node.type} v${node.typeVersion}): ${problem}`));
}
