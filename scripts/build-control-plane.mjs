// `npm run build:control-plane`: builds controlplane/ (the real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler) once into the cache folder, keyed by a hash of its
// sources, and prints the binary's path. A cached build is reused. GOCACHE and GOMODCACHE stay at
// Go's defaults, so later builds on the same machine (CI included) reuse compiled packages.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  buildRecipe,
  cachedBinaryPath,
  controlPlaneSourceDir,
  kubernetesVersion,
} from '../src/sim/controlPlane/binary.ts';

const started = Date.now();
const sourceDir = controlPlaneSourceDir();
const target = cachedBinaryPath();
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

if (exists(target)) {
  console.error(`control plane: cached build reused (${mb(statSync(target).size)}, ${Date.now() - started} ms)`);
  console.log(target);
  process.exit(0);
}

const go = spawnSync('go', ['version'], { encoding: 'utf8' });
if (go.error || go.status !== 0) {
  console.error('control plane: `go` is not on PATH; install Go 1.24 or newer (https://go.dev/dl/) and run again');
  process.exit(2);
}
const version = kubernetesVersion(sourceDir);
const { args } = buildRecipe(version, {
  commit: releaseCommit(version),
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

/** The commit the release's tag points at, as the module proxy records it (undefined if not). */
function releaseCommit(version) {
  const info = spawnSync('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], {
    cwd: sourceDir,
    encoding: 'utf8',
  });
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
