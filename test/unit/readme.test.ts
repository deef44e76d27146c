import { readFileSync } from 'fs';
import { resolve } from 'path';

import { withMatrixTable } from '../../scripts/matrixTable';

describe('README', () => {
	const readme = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');

	it('shows the model table exactly as the matrix renders it (run `npm run docs:matrix` after changing the matrix)', () => {
		expect(withMatrixTable(readme)).toBe(readme);
	});

	it('is for users: at most 300 lines (details live in docs/)', () => {
		expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(300);
	});

	it('names the two set-up commands', () => {
		expect(readme).toContain('npm install && npm start');
		expect(readme).toContain('npm test');
	});
});
