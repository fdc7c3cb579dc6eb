import { caseFold } from 'unicode-case-folding';
import { isWellFormedText, utf8Length } from './text';

/** File reasons a notebook path itself can earn (contract §4). */
export type PathReason = 'INVALID_NAME' | 'PATH_TOO_LONG';

const MAX_PATH_BYTES = 4096;
const MAX_SEGMENT_BYTES = 255;
// Unicode general category Cc: C0, DEL and C1 controls.
const CONTROL_CHARACTER = /\p{Cc}/u;
const FORBIDDEN_CHARACTER = /[/\\:*?"<>|]/;
// Windows reserves these names with any extension ("CON.txt", "lpt1.tar.gz"), in any case.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i;
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const RESERVED_SEGMENTS = new Set(['.', '..', '.git']);

/**
 * Checks one path segment against contract §4: 1–255 UTF-8 bytes, NFC, no control characters,
 * none of `/\:*?"<>|`, not ending in space or dot, not `.`, `..`, `.git`, not a Windows
 * device name. Returns the file reason of the first violation, or `undefined` when valid.
 */
export function checkSegment(segment: string): PathReason | undefined {
  if (segment.length === 0 || !isWellFormedText(segment)) return 'INVALID_NAME';
  if (utf8Length(segment) > MAX_SEGMENT_BYTES) return 'PATH_TOO_LONG';
  if (segment.normalize('NFC') !== segment) return 'INVALID_NAME';
  if (RESERVED_SEGMENTS.has(segment)) return 'INVALID_NAME';
  if (CONTROL_CHARACTER.test(segment) || FORBIDDEN_CHARACTER.test(segment)) return 'INVALID_NAME';
  if (segment.endsWith(' ') || segment.endsWith('.')) return 'INVALID_NAME';
  if (WINDOWS_DEVICE.test(segment)) return 'INVALID_NAME';
  return undefined;
}

/**
 * Checks a notebook path (the internal form: NFC UTF-8, `/`-separated, relative, at most
 * 4,096 bytes, every segment valid). Returns `INVALID_NAME`, `PATH_TOO_LONG`, or
 * `undefined` when the path is valid. Collisions need the whole set: see {@link foldKey}.
 */
export function checkNotebookPath(path: string): PathReason | undefined {
  if (!isWellFormedText(path)) return 'INVALID_NAME';
  if (utf8Length(path) > MAX_PATH_BYTES) return 'PATH_TOO_LONG';
  for (const segment of path.split('/')) {
    const reason = checkSegment(segment);
    if (reason) return reason;
  }
  return undefined;
}

/**
 * The key under which two notebook paths collide (contract §4/§6): NFC, then full Unicode case
 * folding (CaseFolding.txt status C and F, from `unicode-case-folding`), then NFC again
 * because folding can leave a decomposed sequence (`İ` → `i̇`). `/` folds to itself, so the
 * key is per segment. `foldKey('Straße.md') === foldKey('STRASSE.md')`.
 */
export function foldKey(path: string): string {
  // ASCII is already NFC and folds exactly by A–Z → a–z (no ASCII character has a
  // multi-character or non-ASCII folding): the common case skips the table walk.
  if (ASCII_ONLY.test(path)) return path.toLowerCase();
  return caseFold(path.normalize('NFC')).normalize('NFC');
}
