#!/usr/bin/env bash
# The baseline: what a user would write instead of kwave. For each wave, `xargs -P` runs one
# upgrade per pod: read the container's imageID, `kubectl patch` the image, then poll until the
# imageID differs and the pod is Ready. Pods in name order (sort -V), waves of the given sizes.
# Usage: kubectl-loop.sh NAMESPACE SELECTOR CONTAINER IMAGE CONCURRENCY SIZE...   (KUBECONFIG set)
set -euo pipefail
ns=$1 selector=$2 container=$3 image=$4 concurrency=$5
shift 5

upgrade() {
  local pod=$1 old now
  # As a careful user would: repeat a kubectl call that failed (timeouts under load), never patch blind.
  until old=$(kubectl -n "$ns" get pod "$pod" -o jsonpath="{.status.containerStatuses[?(@.name==\"$container\")].imageID}") && [[ -n "$old" ]]; do sleep 0.2; done
  until kubectl -n "$ns" patch pod "$pod" -p "{\"spec\":{\"containers\":[{\"name\":\"$container\",\"image\":\"$image\"}]}}" >/dev/null; do sleep 0.2; done
  while :; do
    if now=$(kubectl -n "$ns" get pod "$pod" -o jsonpath="{.status.containerStatuses[?(@.name==\"$container\")].imageID} {.status.conditions[?(@.type==\"Ready\")].status}") &&
      [[ "$now" != "$old "* && "$now" == *" True" ]]; then return 0; fi
    sleep 0.2
  done
}
export -f upgrade
export ns container image

mapfile -t pods < <(kubectl -n "$ns" get pods -l "$selector" -o name | sed 's|^pod/||' | sort -V)
start=0
for size in "$@"; do
  printf '%s\n' "${pods[@]:start:size}" | xargs -P "$concurrency" -n 1 bash -c 'upgrade "$0"'
  start=$((start + size))
  echo "wave done: $start of ${#pods[@]}"
done
