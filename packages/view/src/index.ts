/**
 * `@slivingdoc/view`: the web view of a notebook (files, history, per-publication diffs,
 * blame, live updates and revert), served from the engine's read API behind the shared HTTP
 * edge (`@slivingdoc/http`). Loaded only when a listener starts.
 */
export { CSP, createViewHandler, type ListenAddress, type ViewOptions } from './server';
