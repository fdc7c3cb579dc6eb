import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';

/**
 * Makes `dir` refuse new entries, returning the undo. Root ignores permission bits, so as root
 * the immutable attribute (`chattr +i`) does it; otherwise mode 0500.
 */
export function refuseWrites(dir: string): () => void {
  if (process.getuid?.() === 0) {
    execFileSync('chattr', ['+i', dir]);
    return () => execFileSync('chattr', ['-i', dir]);
  }
  chmodSync(dir, 0o500);
  return () => chmodSync(dir, 0o700);
}
