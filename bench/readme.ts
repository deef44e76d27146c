// The README's Performance section holds the latest full bench table between two markers; `npm run bench` rewrites it.
import type { BenchResults } from './figures';
import { renderMachine, renderTable } from './figures';

export const README_START = '<!-- bench:start (written by `npm run bench`; do not edit by hand) -->';
export const README_END = '<!-- bench:end -->';

/** What goes between the markers. */
export function readmeBlock(results: BenchResults): string {
	return `Latest run: ${renderMachine(results)}.\n\n${renderTable(results)}`;
}

/** The README with the block between the markers replaced; undefined when the markers are missing. */
export function withBenchBlock(readme: string, block: string): string | undefined {
	const start = readme.indexOf(README_START);
	const end = readme.indexOf(README_END);
	if (start < 0 || end < start) return undefined;
	return `${readme.slice(0, start + README_START.length)}\n${block}\n${readme.slice(end)}`;
}
