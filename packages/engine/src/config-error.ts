/**
 * A configuration an embedder passed that cannot work, found when the service opens (not a
 * caller's request, so never a `DomainError`): today a `workspaceRoot` that does not exist or
 * is not a directory. `setting` names the option; the message names the path.
 */
export class EngineConfigError extends Error {
  override readonly name = 'EngineConfigError';

  constructor(
    readonly setting: 'workspaceRoot' | 'notebookDir',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
