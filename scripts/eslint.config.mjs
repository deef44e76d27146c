// scripts/ gets the lint of code that never ships (test/eslint.config.mjs), printing allowed: its tools write to the terminal.
import { lintFor } from '../test/eslint.config.mjs';

export default lintFor({ console: true });
