// Why a figure misses its target, when it does: written by whoever analysed the miss, attached by `npm run bench` to
// a missed figure (results.json then says so). A miss without an entry here is reported as unexplained.

export const KNOWN_CAUSES: Record<string, string> = {};

export const UNEXPLAINED = 'Not analysed yet: find the cause (see bench/README.md) and fix it, or explain it in bench/causes.ts.';
