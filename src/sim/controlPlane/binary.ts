// Where the real control-plane binary lives: built once from controlplane/ (the Go module in this
// repository) into a cache folder outside the repository, keyed by a hash of the module's sources,
// so a change to go.mod, go.sum or a .go file means a new build and an unchanged module is reused.
// Reads the file system only; `npm run build:control-plane` does the building.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { packagePath } from '../../packageRoot.js';

const BINARY_NAME = 'kwave-control-plane';
const BUILD_COMMAND = 'npm run build:control-plane';

/** The Go module's folder: `controlplane/` at the repository root. */
export function controlPlaneSourceDir(): string {
  return packagePath('controlplane');
}

/** `${KWAVE_CONTROL_PLANE_CACHE}` or `${XDG_CACHE_HOME:-~/.cache}/kwave/control-plane`. */
export function controlPlaneCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KWAVE_CONTROL_PLANE_CACHE) return env.KWAVE_CONTROL_PLANE_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kwave', 'control-plane');
}

/** The files whose content decides the build: go.mod, go.sum and every .go file, by name. */
function controlPlaneSources(sourceDir = controlPlaneSourceDir()): string[] {
  return readdirSync(sourceDir)
    .filter((name) => name === 'go.mod' || name === 'go.sum' || name.endsWith('.go'))
    .sort();
}

/**
 * The first 16 hex digits of a SHA-256 over each source's name and content, and over the build
 * recipe (flags, version stamp), which the build script passes so a changed recipe rebuilds too.
 */
export function controlPlaneHash(recipe: string, sourceDir = controlPlaneSourceDir()): string {
  const hash = createHash('sha256').update(`recipe\0${recipe}\0`);
  for (const name of controlPlaneSources(sourceDir)) {
    hash
      .update(`${name}\0`)
      .update(readFileSync(join(sourceDir, name)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The Kubernetes version the module builds: the `k8s.io/kubernetes vX.Y.Z` line of go.mod. */
export function kubernetesVersion(sourceDir = controlPlaneSourceDir()): string {
  const goMod = readFileSync(join(sourceDir, 'go.mod'), 'utf8');
  const match = /^\s*k8s\.io\/kubernetes\s+(v\d+\.\d+\.\d+)\s*$/m.exec(goMod);
  if (!match?.[1]) throw new Error(`${join(sourceDir, 'go.mod')}: no "k8s.io/kubernetes vX.Y.Z" requirement`);
  return match[1];
}

/** Where a release comes from: its tag's commit and a build date, stamped into /version. */
export interface Provenance {
  commit?: string;
  buildDate?: string;
}

/**
 * How the binary is built: `go build` flags, with the version stamped where the upstream release
 * build stamps it (component-base for /version, client-go for the components' User-Agent). The
 * cache key's `recipe` leaves the provenance out: it follows from the version in go.mod.
 */
export function buildRecipe(version: string, provenance: Provenance = {}): { args: string[]; recipe: string } {
  const [major, minor] = version.slice(1).split('.');
  const values: [string, string | undefined][] = [
    ['gitVersion', version],
    ['gitMajor', major],
    ['gitMinor', minor],
    ['gitTreeState', 'clean'],
  ];
  const stamp = (vals: [string, string | undefined][]) =>
    ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
      vals.filter(([, v]) => v).map(([k, v]) => `-X ${pkg}.${k}=${v}`),
    );
  const fixed = ['build', '-trimpath'];
  const ldflags = (vals: [string, string | undefined][]) => `-ldflags=-s -w ${stamp(vals).join(' ')}`;
  return {
    args: [...fixed, ldflags([...values, ['gitCommit', provenance.commit], ['buildDate', provenance.buildDate]])],
    recipe: [...fixed, ldflags(values)].join(' '),
  };
}

/** Where the binary for the current sources is (or would be) cached. */
export function cachedBinaryPath(env: NodeJS.ProcessEnv = process.env, sourceDir = controlPlaneSourceDir()): string {
  const { recipe } = buildRecipe(kubernetesVersion(sourceDir));
  return join(controlPlaneCacheRoot(env), controlPlaneHash(recipe, sourceDir), BINARY_NAME);
}

export type BinaryLookup = { path: string } | { reason: string };

/**
 * The binary to run: `KWAVE_CONTROL_PLANE_BIN` when set, else the cached build of the current
 * sources; otherwise a reason that names the build command.
 */
export function findControlPlaneBinary(env: NodeJS.ProcessEnv = process.env): BinaryLookup {
  const explicit = env.KWAVE_CONTROL_PLANE_BIN;
  if (explicit) {
    return isExecutable(explicit)
      ? { path: explicit }
      : { reason: `KWAVE_CONTROL_PLANE_BIN=${explicit} is not an executable file` };
  }
  const sourceDir = controlPlaneSourceDir();
  if (!existsSync(join(sourceDir, 'go.mod'))) {
    return {
      reason: `the real control plane is built from controlplane/ in a kwave checkout (${BUILD_COMMAND}); set KWAVE_CONTROL_PLANE_BIN to a built ${BINARY_NAME}`,
    };
  }
  const path = cachedBinaryPath(env, sourceDir);
  return isExecutable(path)
    ? { path }
    : { reason: `the real control plane is not built (no ${path}): run ${BUILD_COMMAND}` };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
