import { TreeError } from '../errors';
import type { Oid } from '../model/object-format';
import {
  checkOid,
  DIR_MODE,
  encodeTree,
  FILE_MODE,
  splitNotebookPath,
  type TreeObjectEntry,
} from '../model/tree-codec';

/** A tree whose nested tree objects are canonical (as `writeTree` encodes them), with its files. */
export interface BaseTree {
  tree: Oid;
  entries: Map<string, Oid>;
}

/** What {@link rebuildTree} needs from the object database. */
export interface TreeIo {
  readTreeObject(tree: Oid, where: string): Promise<TreeObjectEntry[]>;
  putTree(content: Uint8Array): Promise<Oid>;
}

type DirNode = Map<string, Oid | DirNode>;

/**
 * Builds nested trees (git order, modes 100644/40000) from a flat path map, writing each tree
 * object with `putTree`; returns the root's oid. Throws {@link TreeError} for an invalid path or
 * oid, or a path that is both a file and a directory.
 */
export async function buildTree(
  entries: Map<string, Oid>,
  putTree: TreeIo['putTree'],
): Promise<Oid> {
  const root: DirNode = new Map();
  for (const [path, oid] of entries) {
    checkOid(oid, path);
    const segments = splitNotebookPath(path);
    let dir = root;
    for (let i = 0; i < segments.length - 1; i++) {
      const name = segments[i] as string;
      const next = dir.get(name);
      if (typeof next === 'string') throw pathConflict(path);
      if (next) dir = next;
      else {
        const created: DirNode = new Map();
        dir.set(name, created);
        dir = created;
      }
    }
    const leaf = segments[segments.length - 1] as string;
    if (dir.has(leaf)) throw pathConflict(path);
    dir.set(leaf, oid);
  }
  return writeDir(root, putTree);
}

async function writeDir(dir: DirNode, putTree: TreeIo['putTree']): Promise<Oid> {
  const entries: TreeObjectEntry[] = [];
  for (const [name, child] of dir) {
    if (typeof child === 'string') entries.push({ mode: FILE_MODE, name, oid: child });
    else entries.push({ mode: DIR_MODE, name, oid: await writeDir(child, putTree) });
  }
  return putTree(encodeTree(entries));
}

function pathConflict(path: string): TreeError {
  return new TreeError(
    'PATH_CONFLICT',
    `${JSON.stringify(path)} is both a file and a directory`,
    path,
  );
}

/** The changes below one directory: per name, a new file state and/or changes inside it. */
type Patch = Map<string, { file?: Oid | null; dir?: Patch }>;

/** Thrown inside this module when the changes need the full build to decide (or to report). */
class Undecided extends Error {}

/**
 * The tree of `entries` built from `base` by re-encoding only the directories on the path of a
 * changed file; every other subtree keeps its oid unread. Equal to a full build as long as
 * `base.tree` is canonical all the way down (it was built by `writeTree`). Returns `undefined`
 * when the changes hold anything the full build must judge (an invalid path or oid, a file
 * against a directory, an unreadable base tree): the caller then builds from scratch, which
 * reports exactly what it always reported.
 */
export async function rebuildTree(
  entries: Map<string, Oid>,
  base: BaseTree,
  io: TreeIo,
): Promise<Oid | undefined> {
  const root: Patch = new Map();
  let changes = 0;
  try {
    for (const [path, oid] of entries) {
      if (base.entries.get(path) === oid) continue;
      checkOid(oid, path);
      patchAt(root, splitNotebookPath(path), oid);
      changes += 1;
    }
    if (changes === 0 && entries.size === base.entries.size) return base.tree;
    for (const path of base.entries.keys())
      if (!entries.has(path)) patchAt(root, path.split('/'), null);
    return (await apply(root, base.tree, '', io)) ?? (await io.putTree(encodeTree([])));
  } catch {
    // Undecided, or a base tree that cannot be read: the full build decides and reports.
    return undefined;
  }
}

function patchAt(root: Patch, segments: string[], file: Oid | null): void {
  let dir = root;
  for (let i = 0; i < segments.length - 1; i++) {
    const name = segments[i] as string;
    let node = dir.get(name);
    if (node === undefined) {
      node = {};
      dir.set(name, node);
    }
    if (node.file) throw new Undecided();
    node.dir ??= new Map();
    dir = node.dir;
  }
  const leaf = segments[segments.length - 1] as string;
  const node = dir.get(leaf);
  if (node === undefined) dir.set(leaf, { file });
  else if (file !== null && node.dir !== undefined) throw new Undecided();
  else node.file = file;
}

/** The patched tree's oid, or `undefined` when nothing is left in it. */
async function apply(
  patch: Patch,
  tree: Oid | undefined,
  where: string,
  io: TreeIo,
): Promise<Oid | undefined> {
  const byName = new Map<string, TreeObjectEntry>();
  if (tree !== undefined)
    for (const entry of await io.readTreeObject(tree, where)) byName.set(entry.name, entry);
  for (const [name, change] of patch) {
    const old = byName.get(name);
    byName.delete(name);
    const file = change.file !== undefined ? change.file : old?.mode === FILE_MODE ? old.oid : null;
    let dir = old?.mode === DIR_MODE ? old.oid : undefined;
    if (change.dir !== undefined)
      dir = await apply(change.dir, dir, where === '' ? name : `${where}/${name}`, io);
    if (file !== null && dir !== undefined) throw new Undecided();
    if (file !== null) byName.set(name, { mode: FILE_MODE, name, oid: file });
    else if (dir !== undefined) byName.set(name, { mode: DIR_MODE, name, oid: dir });
  }
  if (byName.size === 0) return undefined;
  return io.putTree(encodeTree([...byName.values()]));
}
