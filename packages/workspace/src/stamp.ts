import type { BigIntStats } from 'node:fs';

/** What identifies one version of a file on disk: `lstat` fields that change with content. */
export interface FileStamp {
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: number;
  dev: number;
}

/** The stamp of `lstat`/`fstat` results taken with `{ bigint: true }`. */
export function stampOf(stats: BigIntStats): FileStamp {
  return {
    size: Number(stats.size),
    mtimeNs: stats.mtimeNs,
    ctimeNs: stats.ctimeNs,
    ino: Number(stats.ino),
    dev: Number(stats.dev),
  };
}

/** True when both stamps describe the same file version. */
export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return (
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs &&
    a.ino === b.ino &&
    a.dev === b.dev
  );
}
