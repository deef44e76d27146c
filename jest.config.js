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
	// Every run ends with the time of each test file and the phases the e2e toolkit recorded (test/timing/).
	reporters: ['default', '<rootDir>/test/timing/reporter.js'],
};
