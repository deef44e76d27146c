// The order jest starts test files in, for two workers on two cores: longest first (so the long e2e files, most of
// whose time is idle waiting for n8n's wait tracker or a mock's task, overlap with the rest instead of ending the run
// alone), unit and integration files last, filling the gaps. A file's expected time is jest's own record of its last
// test/timing/expected.json (measured on a quiet machine, `node test/timing/summary.js <dir> --write-expected`), else
// the time its header declares (`// Time: about 80 s` or `about 3 minutes`: a new file is placed by what its author
// measured), else jest's own record of its last run, else a guess from its folder.
'use strict';
const fs = require('fs');
const path = require('path');
const Sequencer = require('@jest/test-sequencer').default;

const REPO_ROOT = path.resolve(__dirname, '../..');

function expected() {
	try {
		return JSON.parse(fs.readFileSync(path.join(__dirname, 'expected.json'), 'utf8')).seconds ?? {};
	} catch {
		return {};
	}
}

/** Seconds a file's header declares on its `// Time: about N s` / `about N minutes` line. */
function declared(file) {
	try {
		const head = fs.readFileSync(file, 'utf8').slice(0, 8000);
		const match = /^\/\/ Time: about (\d+(?:\.\d+)?)\s*(s\b|seconds|min|minutes?)/m.exec(head);
		if (!match) return undefined;
		return Number(match[1]) * (match[2].startsWith('min') ? 60 : 1);
	} catch {
		return undefined;
	}
}

class LongestFirst extends Sequencer {
	sort(tests) {
		const known = expected();
		const guess = (file) => (file.includes('/e2e/') ? 60 : file.includes('/integration/') ? 5 : 1);
		const seconds = (test) => {
			const relative = path.relative(REPO_ROOT, test.path);
			const cached = this._getCache(test)[test.path];
			const fromCache = Array.isArray(cached) ? cached[1] / 1000 : undefined;
			return known[relative] ?? declared(test.path) ?? fromCache ?? guess(test.path);
		};
		return [...tests].sort((a, b) => seconds(b) - seconds(a));
	}
}

module.exports = LongestFirst;
