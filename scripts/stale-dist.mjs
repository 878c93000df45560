// Whether dist/ was built from the src/ on disk: the first src/ file whose dist/ output is missing
// or older than it. tsc (not incremental) rewrites every output, so an mtime comparison suffices.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The path (relative to `root`) of the first src/ file newer than its dist/ output, or undefined. */
export function staleSource(root, dir = join(root, 'src')) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      const stale = staleSource(root, path);
      if (stale) return stale;
      continue;
    }
    if (!path.endsWith('.ts') || path.endsWith('.d.ts')) continue;
    const out = join(root, 'dist', relative(join(root, 'src'), path)).replace(/\.ts$/, '.js');
    let outTime;
    try {
      outTime = statSync(out).mtimeMs;
    } catch {
      return relative(root, path);
    }
    if (statSync(path).mtimeMs > outTime) return relative(root, path);
  }
  return undefined;
}
