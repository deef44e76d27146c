// Why a figure misses its target, when it does: written by whoever analysed the miss, attached by `npm run bench` to
// a missed figure (results.json then says so). A miss without an entry here is reported as unexplained.

export const KNOWN_CAUSES: Record<string, string> = {
	// Analysed 2026-11-22 (bench/README.md, benchmark 4). The serial-write cost was fixed in the node; this is what is
	// left, and it shows only when the mock serves faster than n8n's process can store.
	'overhead.ratio':
		"CPU of Node.js inside n8n, not waiting: after the fix that hands n8n ~1 MiB chunks (nodes/shared/largeChunks.ts; 1.69x → 1.1–1.4x), " +
		'the n8n process is CPU-bound at about 400 MB/s: parsing the HTTP body, the one copy that regroups it, and the ' +
		"garbage collections of n8n's ~300 MB heap that 100 MB of short-lived buffers trigger (one profiled 512 MiB download: " +
		'parsing 428 ms, GC 207 ms, copy 159 ms, file writes 158 ms). curl reaches 550–600 MB/s when the mock serves that fast; ' +
		"with a slower mock the node measured 0.7–1.1x curl. n8n's own HTTP Request node measured 1.6–1.9x in the same runs, " +
		'and a community node can store binary data only through n8n\'s prepareBinaryData.',
};

export const UNEXPLAINED = 'Not analysed yet: find the cause (see bench/README.md) and fix it, or explain it in bench/causes.ts.';
