export type { FileStat, LineRange, PathSets, SuccessResult } from './results';
