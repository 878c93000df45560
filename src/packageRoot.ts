// Files that ship beside the code (schemas/, plans/, controlplane/) are found from the package's
// root, the nearest folder above this module holding kwave's package.json: the code runs from
// src/ (tests), dist/ (the library) and dist/cli/bundle.js (the CLI, one file), so a fixed number
// of "../" would be right for only some of them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'kwave';
let root: string | undefined;

/** `parts` joined onto the package's root folder. */
export function packagePath(...parts: string[]): string {
  root ??= findRoot(dirname(fileURLToPath(import.meta.url)));
  return join(root, ...parts);
}

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} in ${from} or above it`);
  }
}
