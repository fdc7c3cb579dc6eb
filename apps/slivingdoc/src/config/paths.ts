import { isAbsolute, join, relative } from 'node:path';

/** True when `a` and `b` are the same directory or one lies inside the other (lexically). */
export function overlaps(a: string, b: string): boolean {
  return isInsideOrEqual(a, b) || isInsideOrEqual(b, a);
}

function isInsideOrEqual(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

/** An XDG base directory: the variable when it is set to an absolute path, else the fallback. */
function xdgDir(value: string | undefined, fallback: string): string {
  // The XDG spec says relative values are invalid and must be ignored.
  return value !== undefined && value !== '' && isAbsolute(value) ? value : fallback;
}

/** The user's data directory, `$XDG_DATA_HOME` or `~/.local/share` (a driver keeps its store below). */
export function dataHome(env: NodeJS.ProcessEnv, home: string): string {
  return xdgDir(env.XDG_DATA_HOME, join(home, '.local/share'));
}

/** contract §12: `$XDG_CACHE_HOME/slivingdoc` or `~/.cache/slivingdoc`. */
export function defaultPrivateRoot(env: NodeJS.ProcessEnv, home: string): string {
  return join(xdgDir(env.XDG_CACHE_HOME, join(home, '.cache')), 'slivingdoc');
}
