/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	transform: {
		// Type checking happens once in `npm run typecheck`; jest only transpiles.
		'^.+\\.ts$': ['ts-jest', { diagnostics: false }],
	},
	testTimeout: 60_000,
	maxWorkers: 2,
};
