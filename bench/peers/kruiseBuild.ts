// kruise-manager for the peer benchmark, built from the Go module proxy by the wrapper module in
// bench/peers/kruise/ (`go build github.com/openkruise/kruise`), once, into the cache folder beside
// the control plane's: `${XDG_CACHE_HOME:-~/.cache}/kwave/kruise-manager/<hash>/kruise-manager`,
// where <hash> covers the wrapper's go.mod, go.sum and the build flags. Go's own caches stay at
// their defaults. Nothing of Kruise is in the repository: its sources are the module cache's.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { packagePath } from '../../src/packageRoot.js';

const MODULE = 'github.com/openkruise/kruise';
const BUILD_ARGS = ['build', '-trimpath', '-ldflags=-s -w'];

const kruiseModuleDir = () => packagePath('bench', 'peers', 'kruise');

/** The Kruise version the wrapper requires (its go.mod's `github.com/openkruise/kruise vX.Y.Z`). */
function kruiseVersion(goMod = readFileSync(join(kruiseModuleDir(), 'go.mod'), 'utf8')): string {
  const match = /^\s*github\.com\/openkruise\/kruise\s+(v\d+\.\d+\.\d+)\b/m.exec(goMod);
  if (!match?.[1]) throw new Error('bench/peers/kruise/go.mod: no "github.com/openkruise/kruise vX.Y.Z" requirement');
  return match[1];
}

function cachedPath(env: NodeJS.ProcessEnv = process.env): string {
  const hash = createHash('sha256').update(`recipe\0${BUILD_ARGS.join(' ')}\0`);
  for (const name of ['go.mod', 'go.sum'])
    hash
      .update(`${name}\0`)
      .update(readFileSync(join(kruiseModuleDir(), name)))
      .update('\0');
  const root = join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kwave', 'kruise-manager');
  return join(root, hash.digest('hex').slice(0, 16), 'kruise-manager');
}

export interface KruiseBinary {
  path: string;
  version: string;
  /** Seconds the build took; undefined when a cached build was reused. */
  builtSeconds?: number;
  sizeMiB: number;
}

/** The cached kruise-manager, built first when missing (nice 10: minutes of CPU on a cold Go cache). */
export function kruiseManagerBinary(log: (line: string) => void): KruiseBinary {
  const path = cachedPath();
  const version = kruiseVersion();
  const sizeMiB = () => statSync(path).size / 1024 / 1024;
  try {
    if (statSync(path).isFile()) return { path, version, sizeMiB: sizeMiB() };
  } catch {
    // not built yet
  }
  log(`kruise-manager ${version}: building from the Go module proxy into ${path} (a cold build takes minutes)`);
  const started = Date.now();
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.partial-${process.pid}`;
  const build = spawnSync('nice', ['-n', '10', 'go', ...BUILD_ARGS, '-o', partial, MODULE], {
    cwd: kruiseModuleDir(),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (build.error || build.status !== 0) {
    rmSync(partial, { force: true });
    throw new Error(`kruise-manager: go build failed (${build.error?.message ?? `exit ${build.status}`})`);
  }
  chmodSync(partial, 0o755);
  renameSync(partial, path);
  const builtSeconds = (Date.now() - started) / 1000;
  log(`kruise-manager ${version}: built in ${builtSeconds.toFixed(0)} s (${sizeMiB().toFixed(1)} MiB)`);
  return { path, version, builtSeconds, sizeMiB: sizeMiB() };
}

/** The module's source folder in Go's module cache (its config/ holds the CRDs and webhooks), downloaded if missing. */
export function kruiseSourceDir(): string {
  const r = spawnSync('go', ['mod', 'download', '-json', MODULE], { cwd: kruiseModuleDir(), encoding: 'utf8' });
  const dir = r.status === 0 ? (JSON.parse(r.stdout) as { Dir?: string }).Dir : undefined;
  if (!dir) throw new Error(`go mod download ${MODULE}: ${r.stderr.trim() || r.stdout.trim()}`);
  return dir;
}
