// n8n caches its editor's built files (about 700 .js files, 47 MB) in a home's .cache/n8n/public. `npm run lint` is
// ESLint with per-folder config lookup over the whole checkout (the root config must stay n8n's default, so it cannot
// ignore a folder): without this, the `npm test` that follows `npm start` linted .n8n-dev/ too, 60 s instead of 12.
'use strict';
const fs = require('fs');
const path = require('path');

const CONFIG = "// n8n's data and its editor's cached build: never linted (written by scripts/dev-home-lint.js).\nexport default [{ ignores: ['**'] }];\n";

/** Puts an ESLint config that ignores everything into the home folder (the config nearest to every file in it). */
function keepOutOfLint(home) {
	fs.mkdirSync(home, { recursive: true });
	fs.writeFileSync(path.join(home, 'eslint.config.mjs'), CONFIG);
}

module.exports = { keepOutOfLint };
