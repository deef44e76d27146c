/** @type {import('jest').Config} */
module.exports = {
	// jest's node environment that also records each file's CPU (test/timing/environment.js).
	testEnvironment: '<rootDir>/test/timing/environment.js',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	transform: {
		// Type checking happens once in `npm run typecheck`; jest only transpiles.
		'^.+\\.ts$': ['ts-jest', { diagnostics: false }],
	},
	testTimeout: 60_000,
	// Four workers on two cores: the two durable-wait files (started first) spend about 195 s each idle, waiting for
	// n8n's once-a-minute wait tracker, so two more workers keep both cores busy beside them. Five took jest from 765 to
	// 711 s on 2026-11-29, but two of three CI runs with five then failed a test by load (docs/testing.md).
	maxWorkers: 4,
	// Every run ends with the time of each test file and the phases the e2e toolkit recorded (test/timing/).
	reporters: ['default', '<rootDir>/test/timing/reporter.js'],
	// Longest files first, so that long e2e files overlap with the rest (test/timing/sequencer.js).
	testSequencer: '<rootDir>/test/timing/sequencer.js',
};
