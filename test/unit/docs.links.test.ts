// Every relative link in the README and the docs resolves: the file exists, and an anchor (`#…`) into a markdown file
// names one of its headings as GitHub renders it.
import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';

const root = resolve(__dirname, '../..');

/**
 * Files that other work in progress creates. A link to one of these may dangle until that work lands; empty this list
 * as they arrive (the test below fails for an entry that exists, so the list cannot go stale).
 */
const PENDING: string[] = [];

function markdownFiles(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) return markdownFiles(path);
		return name.endsWith('.md') ? [path] : [];
	});
}

const FILES = [join(root, 'README.md'), join(root, 'bench/README.md'), ...markdownFiles(join(root, 'docs'))];

const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;
/** A path inside the repository as prose names one in code: a top folder, then plain path characters (no glob). */
const REPO_PATH = /^(nodes|credentials|test|scripts|bench|examples|docs|\.github|\.ci)\/[\w./-]*$/;
/** Scratch folders git ignores, which a fresh clone does not have. */
const SCRATCH = /(^|\/)(\.work|\.ci-results|\.n8n-dev)(\/|$)/;

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
	return markdown
		.replace(FENCED, '')
		.replace(/`[^`\n]*`/g, '');
}

/** The targets of inline links and images: `[text](target)`, `![alt](target "title")`. */
export function linkTargets(markdown: string): string[] {
	const targets: string[] = [];
	for (const match of prose(markdown).matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
		targets.push(match[1]);
	}
	return targets;
}

/** GitHub's anchor for a heading: rendered text, lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
	const text = heading
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/[`*]/g, '')
		.trim()
		.toLowerCase();
	return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

/** Every anchor a markdown file offers (repeated headings get -1, -2, ... as on GitHub). */
export function anchors(markdown: string): Set<string> {
	const seen = new Map<string, number>();
	const out = new Set<string>();
	for (const line of prose(markdown).split('\n')) {
		const match = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
		if (!match) continue;
		const base = slug(match[1]);
		const count = seen.get(base) ?? 0;
		seen.set(base, count + 1);
		out.add(count === 0 ? base : `${base}-${count}`);
	}
	return out;
}

describe('links in the README and docs/', () => {
	it('finds the files and their links (the parser sees what a reader sees)', () => {
		expect(FILES.map((file) => relative(root, file))).toEqual(
			expect.arrayContaining(['README.md', 'docs/service-interface.md', 'docs/reliability.md']),
		);
		expect(linkTargets('a [x](docs/a.md#b) `[not](c.md)` ![i](p.png "t")\n```\n[no](d.md)\n```\n')).toEqual([
			'docs/a.md#b',
			'p.png',
		]);
		expect(slug('4.3 Model capability matrix (11 models)')).toBe('43-model-capability-matrix-11-models');
		expect(slug("n8n's `Retry On Fail`")).toBe('n8ns-retry-on-fail');
		expect([...anchors('# A\n## B b\n## B b\n')]).toEqual(['a', 'b-b', 'b-b-1']);
		expect(linkTargets(readFileSync(join(root, 'README.md'), 'utf8')).length).toBeGreaterThan(20);
	});

	it.each(FILES.map((file) => [relative(root, file), file]))('%s: every relative link resolves', (_name, file) => {
		const markdown = readFileSync(file, 'utf8');
		const broken: string[] = [];
		for (const target of linkTargets(markdown)) {
			if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
			const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
			const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
			const fromRoot = relative(root, path);
			if (PENDING.includes(fromRoot)) continue;
			if (!existsSync(path)) {
				broken.push(`${target}: no such file`);
				continue;
			}
			if (anchor !== undefined && path.endsWith('.md') && !anchors(readFileSync(path, 'utf8')).has(anchor)) {
				broken.push(`${target}: no heading with anchor #${anchor}`);
			}
		}
		expect(broken).toEqual([]);
	});

	it.each(FILES.map((file) => [relative(root, file), file]))(
		'%s: every repository path written as code (`nodes/…`, `test/…`) exists',
		(_name, file) => {
			const missing = [...readFileSync(file, 'utf8').replace(FENCED, '').matchAll(/`([^`\n]+)`/g)]
				.map((match) => match[1])
				.filter((text) => REPO_PATH.test(text) && !SCRATCH.test(text))
				.filter((path) => !PENDING.includes(path) && !existsSync(join(root, path)));
			expect(missing).toEqual([]);
		},
	);

	it('lists as pending only files that do not exist yet', () => {
		expect(PENDING.filter((path) => existsSync(join(root, path)))).toEqual([]);
	});
});

describe('citations of docs/service-interface.md in the code', () => {
	const doc = readFileSync(join(root, 'docs/service-interface.md'), 'utf8');
	const sections = new Set(
		[...doc.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((match) => match[1]),
	);
	const walk = (dir: string): string[] =>
		readdirSync(join(root, dir)).flatMap((name) => {
			const path = join(dir, name);
			if (name === 'node_modules' || SCRATCH.test(path)) return [];
			if (statSync(join(root, path)).isDirectory()) return walk(path);
			return /\.(ts|js|mjs)$/.test(name) ? [path] : [];
		});
	const sources = ['nodes', 'credentials', 'test', 'scripts', 'bench'].flatMap(walk);

	it("has the service document's section numbers", () => {
		expect([...sections]).toEqual(
			expect.arrayContaining(['1', '2.1', '2.2', '2.3', '3', '4.1', '4.2', '4.3', '5', '6', '7', '8', '9']),
		);
	});

	it('every "docs/service-interface.md §N" in nodes/, credentials/, test/, scripts/ and bench/ names a section it has', () => {
		const cited: string[] = [];
		const wrong: string[] = [];
		for (const path of sources) {
			for (const match of readFileSync(join(root, path), 'utf8').matchAll(/service-interface\.md §(\d+(?:\.\d+)?)/g)) {
				cited.push(`${path} §${match[1]}`);
				if (!sections.has(match[1])) wrong.push(`${path} §${match[1]}`);
			}
		}
		expect(cited.length).toBeGreaterThanOrEqual(10);
		expect(wrong).toEqual([]);
	});
});
