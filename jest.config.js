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
	// Five workers on two cores: the two durable-wait files (started first) spend about 195 s each idle, waiting for
	// n8n's once-a-minute wait tracker, and every e2e file waits on n8n starts and runs; with four, the cores were
	// idle for a quarter of the run (1,115 s of CPU in 765 s of wall), so a fifth fills it (docs/testing.md).
	maxWorkers: 5,
	// Every run ends with the time of each test file and the phases the e2e toolkit recorded (test/timing/).
	reporters: ['default', '<rootDir>/test/timing/reporter.js'],
	// Longest files first, so that long e2e files overlap with the rest (test/timing/sequencer.js).
	testSequencer: '<rootDir>/test/timing/sequencer.js',
};
