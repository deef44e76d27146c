// `n8n-node lint` runs ESLint with this file; package.json has "strict": false because it is not the 3-line default
// (README, Development, says why). The shipped code (nodes/, credentials/, index.ts, package.json) gets n8n's own
// community-node config exactly as strict mode would apply it; what is never published (tests, bench, scripts, docs,
// examples) is left out, since rules for code that runs inside n8n (no timers, no fs, no process) do not fit it.
import { globalIgnores } from 'eslint/config';
import { config } from '@n8n/node-cli/eslint';

export default [
	globalIgnores(['dist', 'test', 'bench', 'scripts', 'docs', 'examples', 'coverage', '.n8n-dev', '.ci-results']),
	...config,
	{
		files: ['**/*.ts'],
		rules: { '@typescript-eslint/no-explicit-any': 'error' },
	},
];
