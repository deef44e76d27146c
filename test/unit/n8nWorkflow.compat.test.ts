/**
 * The package runs against the n8n-workflow of the n8n that loads it, not the one it was built with. Every value it
 * takes from n8n-workflow must exist on both lines users run: 2.41.0 (n8n 2.41.x, the dev dependency) and 1.120.31
 * (n8n 1.123.x, installed here as `n8n-workflow-v1`). `sleepWithAbort` is the cautionary tale: gone since 2.34.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

import { abortableSleepOf } from '../../nodes/shared/transport/wait';

const ROOT = path.resolve(__dirname, '../..');
const LINES: Array<[string, Record<string, unknown>]> = [
	['2.41.0', require('n8n-workflow')],
	['1.120.31', require('n8n-workflow-v1')],
];

function sourceFiles(dir: string): string[] {
	return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
		const relative = path.join(dir, entry.name);
		if (entry.isDirectory()) return sourceFiles(relative);
		return entry.name.endsWith('.ts') ? [relative] : [];
	});
}

/** Runtime values taken from n8n-workflow in one file: named value imports and `ns.X` on a namespace import. */
function valueImports(file: string): string[] {
	const source = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
	const names = new Set<string>();
	const namespaces = new Set<string>();
	for (const statement of source.statements) {
		if (!ts.isImportDeclaration(statement)) continue;
		if ((statement.moduleSpecifier as ts.StringLiteral).text !== 'n8n-workflow') continue;
		const clause = statement.importClause;
		if (!clause || clause.isTypeOnly) continue;
		const bindings = clause.namedBindings;
		if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
		if (bindings && ts.isNamedImports(bindings)) {
			for (const element of bindings.elements) {
				if (!element.isTypeOnly) names.add((element.propertyName ?? element.name).text);
			}
		}
	}
	const visit = (node: ts.Node) => {
		if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && namespaces.has(node.expression.text)) {
			// A namespace used only in a type position (`typeof ns`) is not read here; casts to a record are feature
			// detection and are read by name in abortableSleepOf, tested below.
			names.add(node.name.text);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return [...names];
}

const shipped = [...sourceFiles('nodes'), ...sourceFiles('credentials')];
const imports = shipped.flatMap((file) => valueImports(file).map((name) => ({ file, name })));

describe('values the package takes from n8n-workflow', () => {
	it('finds the imports it checks (the scan itself works)', () => {
		expect(imports.map(({ name }) => name)).toEqual(
			expect.arrayContaining(['NodeApiError', 'NodeOperationError', 'NodeConnectionTypes', 'ManualExecutionCancelledError']),
		);
	});

	it.each(LINES)('exist in n8n-workflow %s', (_line, lib) => {
		const missing = imports.filter(({ name }) => lib[name] === undefined).map(({ file, name }) => `${name} (${file})`);
		expect(missing).toEqual([]);
	});

	it('do not include sleepWithAbort, which n8n-workflow 2.34+ no longer exports', () => {
		expect(imports.filter(({ name }) => name === 'sleepWithAbort')).toEqual([]);
	});
});

describe('abortableSleepOf', () => {
	it.each(LINES)('on n8n-workflow %s: waits, and rejects at once when the signal fires', async (_line, lib) => {
		const sleep = abortableSleepOf(lib);
		let started = Date.now();
		await sleep(30);
		expect(Date.now() - started).toBeGreaterThanOrEqual(25);

		const controller = new AbortController();
		started = Date.now();
		const waiting = sleep(10_000, controller.signal);
		setTimeout(() => controller.abort(), 20);
		await expect(waiting).rejects.toBeDefined();
		expect(Date.now() - started).toBeLessThan(1_000);
	});

	it('prefers sleepWithAbort where it exists (1.x: sleep ignores a signal)', async () => {
		const calls: string[] = [];
		const sleep = abortableSleepOf({
			sleep: async () => void calls.push('sleep'),
			sleepWithAbort: async () => void calls.push('sleepWithAbort'),
		});
		await sleep(1, new AbortController().signal);
		await sleep(1);
		expect(calls).toEqual(['sleepWithAbort', 'sleep']);
	});
});

describe('abortableSleep', () => {
	it("rejects with n8n's ManualExecutionCancelledError, which the engine records as a cancelled run", async () => {
		const { abortableSleep } = await import('../../nodes/shared/transport/wait');
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 10);
		await expect(abortableSleep(10_000, controller.signal, 'exec-1')).rejects.toMatchObject({
			name: 'ManualExecutionCancelledError',
		});
	});
});
