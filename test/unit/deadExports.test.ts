import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { dirname, join, normalize, relative } from 'path';

/**
 * No dead exports in nodes/: every name a file in nodes/ exports is imported by another file of the repository (node
 * code, tests, bench, scripts). An export nobody imports is either dead code or should not be exported.
 */

const root = join(__dirname, '../..');

function tsFiles(dir: string): string[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		if (name === 'node_modules' || name.startsWith('.')) return [];
		if (statSync(path).isDirectory()) return tsFiles(path);
		return name.endsWith('.ts') ? [path] : [];
	});
}

const EXPORT = /^export (?:async )?(?:function|const|class|interface|type|let|abstract class)\s+(\w+)/gm;
const IMPORT = /import\s+(?:type\s+)?(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** `file: name` for every export of a file under `nodes/` that no file imports (node and credential classes aside). */
function deadExports(sources: Map<string, string>): string[] {
	const imported = new Set<string>();
	for (const [file, text] of sources) {
		for (const [, spec, path] of text.matchAll(IMPORT)) {
			const target = normalize(join(dirname(file), path)) + '.ts';
			if (spec.startsWith('*')) imported.add(`${target}:*`);
			for (const name of spec.replace(/[{}]/g, '').split(',')) {
				const bare = name.replace(/^\s*type\s+/, '').split(/\s+as\s+/)[0].trim();
				if (bare) imported.add(`${target}:${bare}`);
			}
		}
	}
	const dead: string[] = [];
	for (const [file, text] of sources) {
		const local = relative(root, file);
		if (!local.startsWith('nodes/') || /\.(node|credentials)\.ts$/.test(file) || imported.has(`${file}:*`)) continue;
		for (const [, name] of text.matchAll(EXPORT)) if (!imported.has(`${file}:${name}`)) dead.push(`${local}: ${name}`);
	}
	return dead;
}

describe('exports of nodes/', () => {
	it('are each imported somewhere (no dead exports)', () => {
		const files = ['nodes', 'credentials', 'test', 'bench', 'scripts'].flatMap((dir) => tsFiles(join(root, dir)));
		const sources = new Map(files.concat(join(root, 'index.ts')).map((file) => [file, readFileSync(file, 'utf8')]));
		expect(sources.size).toBeGreaterThan(50);
		expect(deadExports(sources)).toEqual([]);
	});

	it('control: an export nobody imports is found, an imported one is not', () => {
		const a = join(root, 'nodes/x/a.ts');
		const b = join(root, 'nodes/x/b.ts');
		const sources = new Map([
			[a, "export function used() {}\nexport const unused = 1;\nexport interface Kept {}\n"],
			[b, "import { used } from './a';\nimport type { Kept as K } from './a';\n"],
		]);
		expect(deadExports(sources)).toEqual(['nodes/x/a.ts: unused']);
	});
});
