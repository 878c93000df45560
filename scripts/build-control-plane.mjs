// `npm run build:control-plane [-- --kubernetes 1.33]`: builds controlplane/ (the real etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kubelet) of one Kubernetes release
// (default KWAVE_KUBERNETES, else the newest; src/sim/controlPlane/releases.ts) once into the cache
// folder, keyed by a hash of its sources, and prints the binary's path. A cached build is reused.
// GOCACHE and GOMODCACHE stay at Go's defaults, so later builds on the same machine (CI included)
// reuse compiled packages.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { buildRecipe, cachedBinaryPath, releaseFlags } from '../src/sim/controlPlane/binary.ts';
import { controlPlaneSourceDir, pickRelease } from '../src/sim/controlPlane/releases.ts';

const started = Date.now();
const sourceDir = controlPlaneSourceDir();
const release = pickRelease(kubernetesFlag());
if ('reason' in release) {
  console.error(`control plane: ${release.reason}`);
  process.exit(2);
}
const target = cachedBinaryPath(release);
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

if (exists(target)) {
  console.error(
    `control plane: Kubernetes ${release.version}: cached build reused (${mb(statSync(target).size)}, ${Date.now() - started} ms)`,
  );
  console.log(target);
  process.exit(0);
}

const go = spawnSync('go', ['version'], { encoding: 'utf8' });
if (go.error || go.status !== 0) {
  console.error('control plane: `go` is not on PATH; install Go 1.26 or newer (https://go.dev/dl/) and run again');
  process.exit(2);
}
const { version } = release;
const { args } = buildRecipe(release, {
  commit: releaseCommit(release),
  buildDate: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
});
console.error(`control plane: building Kubernetes ${version} with ${go.stdout.trim()} into ${target}`);
console.error("control plane: a first build takes 10-30 minutes on 2 cores; later ones reuse Go's build cache");

mkdirSync(dirname(target), { recursive: true });
const partial = `${target}.partial-${process.pid}`;
const build = spawnSync('go', [...args, '-o', partial, '.'], { cwd: sourceDir, stdio: 'inherit' });
if (build.status !== 0) {
  rmSync(partial, { force: true });
  console.error(`control plane: go build failed (exit ${build.status ?? build.signal})`);
  process.exit(1);
}
chmodSync(partial, 0o755);
renameSync(partial, target); // atomic: a concurrent reader sees no binary or a whole one
const seconds = ((Date.now() - started) / 1000).toFixed(0);
console.error(`control plane: built in ${seconds} s (${mb(statSync(target).size)})`);
console.log(target);

/** `--kubernetes V`, the only flag; anything else exits 2. */
function kubernetesFlag() {
  try {
    return parseArgs({ options: { kubernetes: { type: 'string' } } }).values.kubernetes;
  } catch (err) {
    console.error(`control plane: ${err.message}; usage: npm run build:control-plane [-- --kubernetes 1.33]`);
    process.exit(2);
  }
}

/** The commit the release's tag points at, as the module proxy records it (undefined if not). */
function releaseCommit(release) {
  const info = spawnSync(
    'go',
    ['mod', 'download', ...releaseFlags(release), '-json', `k8s.io/kubernetes@${release.version}`],
    {
      cwd: sourceDir,
      encoding: 'utf8',
    },
  );
  try {
    return JSON.parse(info.stdout).Origin?.Hash;
  } catch {
    return undefined;
  }
}

function exists(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
