export { default } from '../../tooling/tsup-library.ts';
