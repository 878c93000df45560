// The Kubernetes releases that controlplane/ builds, from one copy of its Go sources: go.mod pins
// the newest, and each versions/<minor>.mod (its checksums in versions/<minor>.sum) an older one,
// built with `go build -modfile`. The few Go files that differ between releases carry the build
// tag `kubernetes<minor>` (e.g. kubernetes1.33), which the build passes. A release is picked by its
// minor (`--kubernetes 1.33`, or KWAVE_KUBERNETES); without one, the newest. Reads files only.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../../packageRoot.js';

export interface KubernetesRelease {
  /** e.g. `1.33` */
  minor: string;
  /** The k8s.io/kubernetes version its module file requires, e.g. `v1.33.13`. */
  version: string;
  /** Its module file, relative to the source folder: `go.mod` or `versions/1.33.mod`. */
  modFile: string;
  /** The checksums beside it (Go derives the name from -modfile): `go.sum` or `versions/1.33.sum`. */
  sumFile: string;
}

/** The Go module's folder: `controlplane/` at the repository root. */
export function controlPlaneSourceDir(): string {
  return packagePath('controlplane');
}

const VERSIONS_DIR = 'versions';

/** The release a module file pins: its `k8s.io/kubernetes vX.Y.Z` requirement. */
function releaseOf(sourceDir: string, modFile: string): KubernetesRelease {
  const path = join(sourceDir, modFile);
  const match = /^\s*k8s\.io\/kubernetes\s+v(\d+)\.(\d+)\.(\d+)\s*$/m.exec(readFileSync(path, 'utf8'));
  if (!match) throw new Error(`${path}: no "k8s.io/kubernetes vX.Y.Z" requirement`);
  const [, major, minor, patch] = match;
  return {
    minor: `${major}.${minor}`,
    version: `v${major}.${minor}.${patch}`,
    modFile,
    sumFile: modFile.replace(/\.mod$/, '.sum'),
  };
}

const byVersion = (a: KubernetesRelease, b: KubernetesRelease) =>
  a.version.localeCompare(b.version, 'en', { numeric: true });

/** Every release the module builds, oldest first; none when the folder is not there (an installed package). */
export function kubernetesReleases(sourceDir = controlPlaneSourceDir()): KubernetesRelease[] {
  if (!existsSync(join(sourceDir, 'go.mod'))) return [];
  const versionsDir = join(sourceDir, VERSIONS_DIR);
  const older = existsSync(versionsDir)
    ? readdirSync(versionsDir)
        .filter((name) => name.endsWith('.mod'))
        .map((name) => releaseOf(sourceDir, join(VERSIONS_DIR, name)))
    : [];
  return [...older, releaseOf(sourceDir, 'go.mod')].sort(byVersion);
}

/** How a user names a release: `1.33`, `v1.33`, or its full version `v1.33.13`. */
const RELEASE_NAME = /^v?(\d+\.\d+)(\.\d+)?$/;

/**
 * The release `wanted` names (default KWAVE_KUBERNETES, else the newest), or why there is none:
 * a name that is not a version, or a version the module does not build (the reason lists those).
 */
export function pickRelease(
  wanted: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  sourceDir = controlPlaneSourceDir(),
): KubernetesRelease | { reason: string } {
  const releases = kubernetesReleases(sourceDir);
  const name = wanted ?? (env.KWAVE_KUBERNETES || undefined);
  const source = wanted === undefined ? 'KWAVE_KUBERNETES' : '--kubernetes';
  const built = releases.map((r) => `${r.minor} (${r.version})`).join(', ');
  if (name === undefined) {
    const newest = releases.at(-1);
    return newest ?? { reason: `no Kubernetes release to build: ${join(sourceDir, 'go.mod')} is missing` };
  }
  const match = RELEASE_NAME.exec(name.trim());
  if (!match) return { reason: `${source}: expected a Kubernetes minor such as 1.33, found "${name}"` };
  const release = releases.find((r) => r.minor === match[1] && (!match[2] || r.version === `v${match[1]}${match[2]}`));
  return release ?? { reason: `${source} ${name}: kwave's control plane builds ${built || 'no release here'}` };
}
