import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { dirname, join, normalize, relative } from 'path';

/**
 * No import cycle in nodes/: the layers import one way (model → task → transport; actions use both). Type-only
 * imports count too: a cycle of types is still two files that cannot be read or moved one without the other.
 */

const root = join(__dirname, '../..');

function tsFiles(dir: string): string[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) return tsFiles(path);
		return name.endsWith('.ts') ? [path] : [];
	});
}

/** Every relative module a file imports or re-exports (`import … from`, `export … from`, `import '…'`). */
const RELATIVE = /(?:\bfrom|^\s*import)\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

function resolveImport(file: string, spec: string, known: ReadonlySet<string>): string | undefined {
	const base = normalize(join(dirname(file), spec));
	return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => known.has(candidate));
}

/** The import graph of `sources` (file → the files it imports), relative imports only. */
function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
	const known = new Set(sources.keys());
	const graph = new Map<string, string[]>();
	for (const [file, text] of sources) {
		const targets = [...text.matchAll(RELATIVE)].map(([, spec]) => resolveImport(file, spec, known));
		graph.set(file, [...new Set(targets.filter((target): target is string => target !== undefined))]);
	}
	return graph;
}

/** Each cycle once, as `a → b → a` with paths relative to the repository (depth-first, gray/black marking). */
function importCycles(graph: ReadonlyMap<string, string[]>): string[] {
	const state = new Map<string, 'open' | 'done'>();
	const path: string[] = [];
	const cycles: string[] = [];
	const visit = (file: string): void => {
		state.set(file, 'open');
		path.push(file);
		for (const next of graph.get(file) ?? []) {
			if (state.get(next) === 'open') {
				cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(root, f)).join(' → '));
			} else if (!state.has(next)) {
				visit(next);
			}
		}
		path.pop();
		state.set(file, 'done');
	};
	for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
	return cycles;
}

describe('the import graph of nodes/', () => {
	it('has no cycle', () => {
		const files = tsFiles(join(root, 'nodes'));
		expect(files.length).toBeGreaterThan(40);
		const graph = importGraph(new Map(files.map((file) => [file, readFileSync(file, 'utf8')])));
		expect(importCycles(graph)).toEqual([]);
	});

	it('control: a cycle through a type-only import or a re-export is found, a diamond is not', () => {
		const at = (name: string) => join(root, 'nodes/x', `${name}.ts`);
		const sources = new Map([
			[at('a'), "import { b } from './b';\nimport { d } from './d';\n"],
			[at('b'), "import type { C } from './c';\n"],
			[at('c'), "export { a } from './a';\n"],
			[at('d'), "import { b } from './b';\nimport { readFileSync } from 'fs';\n"],
		]);
		const cycle = 'nodes/x/a.ts → nodes/x/b.ts → nodes/x/c.ts → nodes/x/a.ts';
		expect(importCycles(importGraph(sources))).toEqual([cycle]);
		sources.set(at('c'), "export const c = 1;\n");
		expect(importCycles(importGraph(sources))).toEqual([]);
	});
});
