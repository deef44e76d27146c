// Small statistics: every figure is a median of several runs, on a shared and noisy machine.

export function median(values: number[]): number {
	if (values.length === 0) return Number.NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function max(values: number[]): number {
	return values.length === 0 ? Number.NaN : Math.max(...values);
}
