// Time: about 3 s (one node process running ESLint).
// n8n's lint rules read a node's description as written: the rules on credentials and on the Operation selector
// (an action on every option, in sentence case; five or more options sorted) see only literals in the class.
// nodeBase() and operationProperty() (nodes/shared/descriptions/nodeBase.ts) build those parts, so here the
// description each node really has is written out as the literal class n8n's rules expect and linted with the
// package's own config (npm run lint's), under the node file's own path.
import { spawnSync } from 'child_process';
import { resolve } from 'path';
import type { INodeType } from 'n8n-workflow';

import { GenGatewayChat } from '../../nodes/GenGatewayChat/GenGatewayChat.node';
import { GenGatewayImage } from '../../nodes/GenGatewayImage/GenGatewayImage.node';
import { GenGatewayModels } from '../../nodes/GenGatewayModels/GenGatewayModels.node';
import { GenGatewayVideo } from '../../nodes/GenGatewayVideo/GenGatewayVideo.node';

const ROOT = resolve(__dirname, '../..');
const NODES: Record<string, INodeType> = {
	GenGatewayChat: new GenGatewayChat(),
	GenGatewayImage: new GenGatewayImage(),
	GenGatewayModels: new GenGatewayModels(),
	GenGatewayVideo: new GenGatewayVideo(),
};

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A value as TypeScript source; 'main' as n8n's lint wants a connection type written. */
function literal(value: unknown, indent = '\t'): string {
	const inner = `${indent}\t`;
	if (Array.isArray(value)) return `[\n${value.map((v) => `${inner}${literal(v, inner)},\n`).join('')}${indent}]`;
	if (value !== null && typeof value === 'object') {
		const entries = Object.entries(value).map(
			([key, v]) => `${inner}${IDENTIFIER.test(key) ? key : JSON.stringify(key)}: ${literal(v, inner)},\n`,
		);
		return `{\n${entries.join('')}${indent}}`;
	}
	return value === 'main' ? 'NodeConnectionTypes.Main' : JSON.stringify(value);
}

/** The node's class with its description as literals, the other properties left out (their source is linted). */
function classSource(name: string, node: INodeType): string {
	const description = {
		...node.description,
		properties: node.description.properties.filter((property) => property.name === 'operation'),
	};
	return [
		"import { NodeConnectionTypes } from 'n8n-workflow';",
		"import type { INodeType, INodeTypeDescription } from 'n8n-workflow';",
		'',
		`export class ${name} implements INodeType {`,
		`\tdescription: INodeTypeDescription = ${literal(description)};`,
		'}',
		'',
	].join('\n');
}

const LINT = `
const { ESLint } = require('eslint');
(async () => {
	let input = '';
	for await (const chunk of process.stdin) input += chunk;
	const eslint = new ESLint({ cwd: process.cwd() });
	const found = {};
	for (const { filePath, source } of JSON.parse(input)) {
		const [result] = await eslint.lintText(source, { filePath });
		found[filePath] = result.messages.map((m) => m.ruleId + ': ' + m.message);
	}
	process.stdout.write(JSON.stringify(found));
})();
`;

/** ESLint's findings per node, on the sources given, as `npm run lint` would report them in the node's file. */
function lint(sources: Record<string, string>): Record<string, string[]> {
	const files = Object.entries(sources).map(([name, source]) => ({
		filePath: resolve(ROOT, `nodes/${name}/${name}.node.ts`),
		source,
	}));
	// Not jest's NODE_ENV=test: n8n's rules then take every file for Test.node.ts.
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([key]) => !/^(npm_|ESLINT_FLAGS$|NODE_ENV$)/i.test(key)),
	);
	const run = spawnSync(process.execPath, ['-e', LINT], {
		cwd: ROOT,
		input: JSON.stringify(files),
		encoding: 'utf8',
		env: { ...env, ESLINT_FLAGS: 'unstable_config_lookup_from_file' },
		timeout: 60_000,
	});
	expect(run.stderr).toBe('');
	const found = JSON.parse(run.stdout) as Record<string, string[]>;
	return Object.fromEntries(files.map(({ filePath }, index) => [Object.keys(sources)[index], found[filePath]]));
}

describe("the node descriptions, as literals, pass n8n's lint rules", () => {
	it('every node: nothing found but the Resource selector Video leaves out on purpose (see its node file)', () => {
		const sources = Object.fromEntries(Object.entries(NODES).map(([name, node]) => [name, classSource(name, node)]));
		const found = lint(sources);
		expect(found).toEqual({
			GenGatewayChat: [],
			GenGatewayImage: [],
			GenGatewayModels: [],
			GenGatewayVideo: [
				'@n8n/community-nodes/resource-operation-pattern: Node has 7 operations without resources. Use resources to ' +
					'organize operations when there are more than 5 operations.',
			],
		});
	});

	it('control: an action not in sentence case, and a credential of another package, are found', () => {
		const source = classSource('GenGatewayModels', NODES.GenGatewayModels)
			.replace('"Get many models"', '"Get Many Models"')
			.replace('"genGatewayApi"', '"openAiApi"');
		const [found] = Object.values(lint({ GenGatewayModels: source }));
		expect(found.map((message) => message.split(':')[0]).sort()).toEqual([
			'@n8n/community-nodes/no-credential-reuse',
			'@n8n/community-nodes/valid-credential-references',
			'n8n-nodes-base/node-param-operation-option-action-miscased',
		]);
	});
});
