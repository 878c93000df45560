// Whether dist/ was built from the src/ on disk: the first src/ file whose dist/ output is missing
// or older than it. tsc (not incremental) rewrites every output, so an mtime comparison suffices.
// The CLI's bundle (dist/cli/bundle.js, which bin/kwave.js runs) is an output of every src/ file.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The path (relative to `root`) of the first src/ file newer than its dist/ output, or undefined. */
export function staleSource(
  root,
  dir = join(root, 'src'),
  bundleTime = mtimeOf(join(root, 'dist', 'cli', 'bundle.js')),
) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      const stale = staleSource(root, path, bundleTime);
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
    const srcTime = statSync(path).mtimeMs;
    if (srcTime > outTime || srcTime > bundleTime) return relative(root, path);
  }
  return undefined;
}

/** A file's mtime, or -Infinity when it is missing (then every source is newer). */
function mtimeOf(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.NEGATIVE_INFINITY;
  }
}
