import * as nodeFs from 'node:fs';

const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;

type Options = object | string | null | undefined;

function withMode(options: Options, mode: number) {
  if (typeof options === 'string') return { encoding: options as BufferEncoding, mode };
  return { ...(options ?? {}), mode };
}

/** Forwards to `target`, except for the named functions. */
function overriding<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (typeof property === 'string' && property in overrides) return overrides[property];
      const value = Reflect.get(object, property, receiver);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/**
 * Node's file system for an object database in private state: every file it creates is 0600
 * and every directory 0700 (contract §4). isomorphic-git and our pack installer create files with
 * the process defaults, so the creating calls are wrapped; everything else is Node's own.
 */
export function privateModeFs(): typeof nodeFs {
  const p = nodeFs.promises;
  const promises = overriding(p, {
    writeFile: (path: string, data: Uint8Array | string, options?: Options) =>
      p.writeFile(path, data, withMode(options, FILE_MODE)),
    mkdir: (path: string, options?: Options) =>
      p.mkdir(path, withMode(options, DIRECTORY_MODE) as nodeFs.MakeDirectoryOptions),
  });
  return overriding(nodeFs, {
    promises,
    writeFileSync: (path: string, data: Uint8Array | string, options?: Options) =>
      nodeFs.writeFileSync(path, data, withMode(options, FILE_MODE)),
    mkdirSync: (path: string, options?: Options) =>
      nodeFs.mkdirSync(path, withMode(options, DIRECTORY_MODE) as nodeFs.MakeDirectoryOptions),
  });
}
