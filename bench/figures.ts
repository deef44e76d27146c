// The shape of bench/results.json (named apart from it: `./results` would load the JSON), the targets of issue 7,
// and the table printed and shown in the README.
import { max, median } from './stats';

export interface Target {
	op: '<=' | '>=';
	value: number;
}

export interface Figure {
	id: string;
	/** Which benchmark (1–4) it belongs to. */
	bench: 1 | 2 | 3 | 4;
	label: string;
	unit: 'MiB' | 's' | 'ms' | 'x' | 'requests';
	/** `aggregate` of `samples`. */
	value: number;
	aggregate: 'median' | 'max';
	/** Decimals kept (samples and value are rounded to them). */
	digits: number;
	/** One value per run, round or task: the figure is recomputed from them (results cannot be typed in). */
	samples: number[];
	/** Absent: shown for comparison, no target. */
	target?: Target;
	met?: boolean;
	/** Required when a target is missed: what causes it. */
	cause?: string;
	/** How it was measured, in one sentence. */
	how: string;
}

export interface BenchResults {
	schema: 1;
	/** ISO time the run ended. */
	date: string;
	quick: boolean;
	machine: {
		cpus: number;
		cpuModel: string;
		memoryGiB: number;
		node: string;
		n8n: string;
		/** 1-minute load average at the start and the end of the run, and the highest seen between benchmarks. */
		loadAverage: { start: number; end: number; max: number };
	};
	/** The git commit the package was built from, and whether the tree had changes. */
	source: { commit: string; dirty: boolean };
	config: unknown;
	durationSeconds: number;
	figures: Figure[];
	/** Raw per-run measurements, for whoever wants to look closer. */
	details: Record<string, unknown>;
}

export function meets(value: number, target: Target): boolean {
	return target.op === '<=' ? value <= target.value : value >= target.value;
}

export function aggregate(kind: Figure['aggregate'], samples: number[]): number {
	return kind === 'median' ? median(samples) : max(samples);
}

/** The figures every full result must have, each with its target as issue 7 sets it (from the run's own settings). */
export function expectedTargets(config: {
	batch: { taskSeconds: number; pollSeconds: number };
}): Record<string, Target> {
	const { taskSeconds: T, pollSeconds: poll } = config.batch;
	return {
		'memory.videoAdded': { op: '<=', value: 64 },
		'batch.parallelSeconds': { op: '<=', value: T + 2 * poll },
		'batch.speedup': { op: '>=', value: 10 },
		'polling.statusRequestsPerTask': { op: '<=', value: T / poll + 3 },
		'latency.afterSuccessBeyondTransfer': { op: '<=', value: poll * 1000 },
		'overhead.ratio': { op: '<=', value: 1.3 },
	};
}

function formatValue(value: number, unit: Figure['unit']): string {
	switch (unit) {
		case 'x':
			return `${value.toFixed(value >= 10 ? 1 : 2)}×`;
		case 'MiB':
			return `${value.toFixed(0)} MiB`;
		case 's':
			return `${value.toFixed(1)} s`;
		case 'ms':
			return `${value.toFixed(0)} ms`;
		case 'requests':
			return `${value}`;
	}
}

function formatTarget(figure: Figure): string {
	if (!figure.target) return '–';
	return `${figure.target.op === '<=' ? '≤' : '≥'} ${formatValue(figure.target.value, figure.unit)}`;
}

function verdict(figure: Figure): string {
	if (!figure.target) return '';
	return figure.met ? 'met' : '**missed**';
}

/** The Markdown table: one row per figure, in benchmark order. */
export function renderTable(results: BenchResults): string {
	const lines = [
		'| # | Figure | Result | Target | |',
		'|---|---|---|---|---|',
		...results.figures.map(
			(figure) =>
				`| ${figure.bench} | ${figure.label} | ${formatValue(figure.value, figure.unit)} | ${formatTarget(figure)} | ${verdict(figure)} |`,
		),
	];
	return lines.join('\n');
}

/** One line saying when, where and how loaded. */
export function renderMachine(results: BenchResults): string {
	const { machine } = results;
	const load = machine.loadAverage;
	return (
		`${results.date.slice(0, 10)}, ${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
		`n8n ${machine.n8n}; load average ${load.start.toFixed(1)}–${load.max.toFixed(1)} during the run` +
		(results.quick ? ' — QUICK run (smaller sizes), not for the README' : '')
	);
}

/** A figure from its samples: the aggregate, and whether it meets its target (a miss needs a cause). */
export function makeFigure(spec: Omit<Figure, 'value' | 'met' | 'digits'> & { digits?: number }): Figure {
	const digits = spec.digits ?? 1;
	const samples = spec.samples.map((sample) => roundTo(sample, digits));
	const value = roundTo(aggregate(spec.aggregate, samples), digits);
	const figure: Figure = { ...spec, digits, samples, value };
	if (spec.target) figure.met = meets(value, spec.target);
	return figure;
}

export function roundTo(value: number, digits: number): number {
	const factor = 10 ** digits;
	return Math.round(value * factor) / factor;
}
