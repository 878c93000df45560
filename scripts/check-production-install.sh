#!/usr/bin/env bash
# The Dockerfile's runtime stage, without a container engine: the package as `npm pack` ships it
# (plus the lockfile), installed with `npm ci --omit=dev` in a clean folder, must run kwave. Catches
# a runtime import of a devDependency (tsx, typescript, fast-check…) and a file missing from the
# package's "files". Needs dist/ built (npm run build).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$(npm pack --ignore-scripts --silent --pack-destination "$work")"
tar -xzf "$work/$tarball" -C "$work"
cp package-lock.json "$work/package/"
cd "$work/package"
npm ci --omit=dev --no-audit --no-fund --ignore-scripts --loglevel=error
for dev in tsx typescript fast-check eslint; do
  if [ -e "node_modules/$dev" ]; then echo "production install holds devDependency $dev" >&2; exit 1; fi
done
echo "production install: $(du -sh node_modules | cut -f1) of node_modules, $(ls node_modules | wc -l) top-level packages"
node bin/kwave.js --version
node bin/kwave.js validate plans deploy/plans
# A whole rollout from the production install: its simulator, then `kwave run` against it.
node bin/kwave.js sim --pods 3 --port 0 --kubeconfig-out "$work/kc" >"$work/sim.log" 2>&1 &
sim=$!
trap 'kill "$sim" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 300); do [ -s "$work/kc" ] && break; sleep 0.2; done
[ -s "$work/kc" ] || { echo "the simulator did not start:" >&2; cat "$work/sim.log" >&2; exit 1; }
node bin/kwave.js run plans/demo.yaml --kubeconfig "$work/kc" --metrics-address off | tail -2
kill "$sim"
wait "$sim" 2>/dev/null || true
echo "production install: ok"
