/** One-based inclusive line range of a marker block in a materialised file. */
export interface LineRange {
  start: number;
  end: number;
}

/** Per-file diffstat entry of a success result. */
export interface FileStat {
  path: string;
  insertions: number;
  deletions: number;
}

/** The configured path sets, normalised and sorted (SPEC §5). Empty when not configured. */
export interface PathSets {
  readOnly: string[];
  writable: string[];
}

/** The structured object of a successful call, in the page's field order. */
export interface SuccessResult {
  code: 'OK';
  path: string;
  generation: number;
  filesChanged: number;
  insertions: number;
  deletions: number;
  files: FileStat[];
  readOnly: string[];
  writable: string[];
}
