// Where the real control-plane binary lives: built once per Kubernetes release from controlplane/
// (the Go module in this repository, releases.ts) into a cache folder outside the repository,
// keyed by a hash of the release's module files, the shared Go sources and the build recipe, so a
// change to any of them means a new build and an unchanged release is reused.
// Reads the file system only; `npm run build:control-plane` does the building.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { controlPlaneSourceDir, pickRelease, type KubernetesRelease } from './releases.js';

const BINARY_NAME = 'kwave-control-plane';
const BUILD_COMMAND = 'npm run build:control-plane';

/** `${KWAVE_CONTROL_PLANE_CACHE}` or `${XDG_CACHE_HOME:-~/.cache}/kwave/control-plane`. */
export function controlPlaneCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KWAVE_CONTROL_PLANE_CACHE) return env.KWAVE_CONTROL_PLANE_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kwave', 'control-plane');
}

/** The files whose content decides a release's build: its go.mod and go.sum, and every .go file. */
function controlPlaneSources(release: KubernetesRelease, sourceDir: string): string[] {
  const goFiles = readdirSync(sourceDir).filter((name) => name.endsWith('.go'));
  return [release.modFile, release.sumFile, ...goFiles.sort()];
}

/**
 * The first 16 hex digits of a SHA-256 over each source's name and content, and over the build
 * recipe (flags, version stamp), which the build script passes so a changed recipe rebuilds too.
 */
export function controlPlaneHash(
  recipe: string,
  release: KubernetesRelease,
  sourceDir = controlPlaneSourceDir(),
): string {
  const hash = createHash('sha256').update(`recipe\0${recipe}\0`);
  for (const name of controlPlaneSources(release, sourceDir)) {
    hash
      .update(`${name}\0`)
      .update(readFileSync(join(sourceDir, name)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Where a release comes from: its tag's commit and a build date, stamped into /version. */
export interface Provenance {
  commit?: string;
  buildDate?: string;
}

/**
 * How a release's binary is built: `go build` with the release's module file and build tag, and
 * the version stamped where the upstream release build stamps it (component-base for /version,
 * client-go for the components' User-Agent). The cache key's `recipe` leaves the provenance out:
 * it follows from the version in the module file.
 */
export function buildRecipe(
  release: KubernetesRelease,
  provenance: Provenance = {},
): { args: string[]; recipe: string } {
  const { version } = release;
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
  const fixed = ['build', ...releaseFlags(release), '-trimpath'];
  const ldflags = (vals: [string, string | undefined][]) => `-ldflags=-s -w ${stamp(vals).join(' ')}`;
  return {
    args: [...fixed, ldflags([...values, ['gitCommit', provenance.commit], ['buildDate', provenance.buildDate]])],
    recipe: [...fixed, ldflags(values)].join(' '),
  };
}

/** The go command's flags that select a release: its module file and its build tag. */
export function releaseFlags(release: KubernetesRelease): string[] {
  return [`-modfile=${release.modFile}`, `-tags=kubernetes${release.minor}`];
}

/** Where the binary of a release, from the current sources, is (or would be) cached. */
export function cachedBinaryPath(
  release: KubernetesRelease,
  env: NodeJS.ProcessEnv = process.env,
  sourceDir = controlPlaneSourceDir(),
): string {
  const { recipe } = buildRecipe(release);
  return join(controlPlaneCacheRoot(env), controlPlaneHash(recipe, release, sourceDir), BINARY_NAME);
}

export type BinaryLookup = { path: string } | { reason: string };

/**
 * The binary to run: `KWAVE_CONTROL_PLANE_BIN` when set, else the cached build of the release
 * `kubernetes` names (default KWAVE_KUBERNETES, else the newest, releases.ts); otherwise a reason
 * that names the build command.
 */
export function findControlPlaneBinary(env: NodeJS.ProcessEnv = process.env, kubernetes?: string): BinaryLookup {
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
  const release = pickRelease(kubernetes, env, sourceDir);
  if ('reason' in release) return release;
  const path = cachedBinaryPath(release, env, sourceDir);
  return isExecutable(path)
    ? { path }
    : {
        reason: `the real control plane of Kubernetes ${release.minor} is not built (no ${path}): run ${BUILD_COMMAND} -- --kubernetes ${release.minor}`,
      };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
