// scripts/ gets the lint of code that never ships: see test/eslint.config.mjs.
export { default } from '../test/eslint.config.mjs';
