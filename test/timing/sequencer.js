// The order jest starts test files in, for two workers on two cores: longest first (so the long e2e files, most of
// whose time is idle waiting for n8n's wait tracker or a mock's task, overlap with the rest instead of ending the run
// alone), unit and integration files last, filling the gaps. A file's expected time is jest's own record of its last
// run when there is one, else test/timing/expected.json (written from a measured run by scripts/testing-doc.mjs), else
// a guess from its folder.
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

class LongestFirst extends Sequencer {
	sort(tests) {
		const known = expected();
		const guess = (file) => (file.includes('/e2e/') ? 60 : file.includes('/integration/') ? 5 : 1);
		const seconds = (test) => {
			const relative = path.relative(REPO_ROOT, test.path);
			const cached = this._getCache(test)[test.path];
			const fromCache = Array.isArray(cached) ? cached[1] / 1000 : undefined;
			return known[relative] ?? fromCache ?? guess(test.path);
		};
		return [...tests].sort((a, b) => seconds(b) - seconds(a));
	}
}

module.exports = LongestFirst;
