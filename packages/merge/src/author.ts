/**
 * `@slivingdoc/merge/author`: the author-name rules of contract §9 alone. A subpath of its own
 * because a bundler that splits chunks keeps every module a barrel re-exports once the barrel
 * is imported at all (esbuild does): importing these through `@slivingdoc/merge` would put all
 * of merge in front of whatever checks an actor name (the app's start-up, before `initialize`).
 */
export { DEFAULT_AUTHOR, isValidAuthorName } from './model/commit-codec';
