// The scale table (docs/performance.md, "At scale") from bench/scale/results.json's figures.
import type { ScaleFigure } from './common';

export const SCALE_START = '<!-- scale:start (written by `npm run bench:scale`; do not edit by hand) -->';
export const SCALE_END = '<!-- scale:end -->';

const CASES: Record<ScaleFigure['case'], string> = {
	1: '1 one execution',
	2: '2 queue mode',
	3: '3 HTTP Request loop',
	4: '4 one download',
};

export function formatValue(value: number | undefined, unit: string): string {
	if (value === undefined || Number.isNaN(value)) return '–';
	switch (unit) {
		case 'x':
			return `${value.toFixed(2)}×`;
		case '%':
			return `${value.toFixed(1)} %`;
		case 's':
			return `${value.toFixed(0)} s`;
		case 'ms':
			return `${value.toFixed(0)} ms`;
		case 'MiB':
			return `${value.toFixed(value < 10 ? 2 : 0)} MiB`;
		case 'KiB':
			return `${value.toFixed(0)} KiB`;
		default:
			return `${Number.isInteger(value) ? value : value.toFixed(2)}${unit ? ` ${unit}` : ''}`;
	}
}

function verdict(figure: ScaleFigure): string {
	if (!figure.target) return '';
	const target = `${figure.target.op === '<=' ? '≤' : '≥'} ${formatValue(figure.target.value, figure.unit)}`;
	return figure.met ? `${target} met` : `${target} **missed**`;
}

export function renderScaleTable(figures: ScaleFigure[]): string {
	return [
		'| Case | Figure | Measured | Ideal | Target |',
		'|---|---|---|---|---|',
		...figures.map(
			(f) => `| ${CASES[f.case]} | ${f.label} | ${formatValue(f.value, f.unit)} | ${formatValue(f.ideal, f.unit)} | ${verdict(f)} |`,
		),
	].join('\n');
}

export function withScaleBlock(text: string, block: string): string | undefined {
	const start = text.indexOf(SCALE_START);
	const end = text.indexOf(SCALE_END);
	if (start < 0 || end < start) return undefined;
	return `${text.slice(0, start + SCALE_START.length)}\n${block}\n${text.slice(end)}`;
}
