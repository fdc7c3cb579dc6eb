/**
 * `@slivingdoc/engine/actor`: the actor rules of contract §9 (an actor is a commit's author name)
 * and its default, on a subpath that loads nothing else, so a command line can validate
 * `--actor` without loading the engine (the app's `serve` does so before its first
 * `initialize` answer). Also re-exported by the package's main entry.
 */
export {
  DEFAULT_AUTHOR as DEFAULT_ACTOR,
  isValidAuthorName as isValidActor,
} from '@slivingdoc/merge/author';
