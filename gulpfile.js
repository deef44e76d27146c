// The asset pipeline: after `tsc`, copy each node's and credential's icons (light + dark SVG) and codex files
// (*.node.json) next to the compiled JavaScript in dist/, keeping the folder structure.
const { src, dest, parallel } = require('gulp');

function copyIcons() {
	return src(['nodes/**/*.svg', 'nodes/**/*.png', 'credentials/**/*.svg', 'credentials/**/*.png'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

function copyCodex() {
	return src('nodes/**/*.node.json', { base: '.' }).pipe(dest('dist'));
}

exports['build:assets'] = parallel(copyIcons, copyCodex);
