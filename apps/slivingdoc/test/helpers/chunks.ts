import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const STATIC_IMPORT =
  /(?:^|[;\n])\s*(?:import|export)\s*(?:[\w*{}\s,$]*?\s*from\s*)?["']([^"']+)["']/g;

/**
 * The bare module specifiers a built chunk loads before it runs: its static imports and
 * those of the chunks it statically imports (dynamic `import()`s are not followed).
 */
export function staticExternalImports(distDir: string, entry: string): string[] {
  const seen = new Set<string>();
  const external = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(join(distDir, file), 'utf8');
    for (const [, specifier] of source.matchAll(STATIC_IMPORT)) {
      if (specifier!.startsWith('./')) pending.push(specifier!.slice(2));
      else external.add(specifier!);
    }
  }
  return [...external].sort();
}
