// n8n's community-node rules (the ones n8n's verification applies) on the shipped code, with TypeScript parsing.
import tseslint from 'typescript-eslint';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'test/**', 'scripts/**', 'bench/**', '*.js', '*.mjs'] },
	...tseslint.configs.recommended,
	n8nCommunityNodesPlugin.configs.recommended,
	{
		files: ['**/*.ts'],
		rules: {
			'@typescript-eslint/no-explicit-any': 'error',
			'no-console': 'error',
		},
	},
];
