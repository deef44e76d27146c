// Lint for code that never ships: test/ (this file), bench/ and scripts/ (their eslint.config.mjs use lintFor below).
// The root eslint.config.mjs is n8n's 3-line default, which strict mode ("strict": true, n8n Cloud eligibility)
// requires unchanged; it applies n8n's community-node rules (no timers, fs, process, child_process...) to every .ts
// file, rules written for code that runs inside n8n. `npm run lint` runs `n8n-node lint` with
// ESLINT_FLAGS=unstable_config_lookup_from_file (ESLint 9.29), so each file gets the eslint.config.mjs nearest to it:
// this one under test/, n8n's everywhere else (nodes/, credentials/, index.ts, package.json).
import js from '@eslint/js';
import { globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** `console`: whether the folder's TypeScript may print (tools do; so do long e2e tests, reporting progress). */
export function lintFor({ console }) {
	return tseslint.config(
		// Scratch folders, ignored by git too (.gitignore: test/e2e/.work/, bench/.work/).
		globalIgnores(['**/.work/']),
		// A directive kept for a rule this config leaves off (no-console in tests) is no finding.
		{ linterOptions: { reportUnusedDisableDirectives: 'off' } },
		{
			files: ['**/*.ts'],
			extends: [js.configs.recommended, tseslint.configs.recommended],
			rules: {
				'@typescript-eslint/no-explicit-any': 'error',
				// A parameter an interface demands but a stub does not use is named _x.
				'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
				// Two n8n-workflow lines side by side (2.x and the n8n-workflow-v1 alias, which has no types of its own).
				'@typescript-eslint/no-require-imports': ['error', { allow: ['^n8n-workflow'] }],
				'no-console': console ? 'off' : 'error',
			},
		},
		{
			files: ['**/*.{js,mjs,cjs}'],
			extends: [js.configs.recommended],
			languageOptions: { globals: { ...globals.node } },
		},
	);
}

export default lintFor({ console: true });
