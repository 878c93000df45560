// The real control plane for tests (src/sim/controlPlane), and a skip reason for a machine where
// it is not built (CI builds it: .ci/run calls npm run build:control-plane).
import { findControlPlaneBinary, pickRelease, type KubernetesRelease } from '../../../src/sim/controlPlane/index.js';

export { startControlPlane, readAudit, type ControlPlane } from '../../../src/sim/controlPlane/index.js';

/** For `describe(..., { skip })`: a reason naming the build command when the binary is missing. */
export function skipUnlessControlPlane(): string | false {
  const found = findControlPlaneBinary();
  // The prefix scripts/run-tests.mjs counts as a missing prerequisite (.ci/run then fails).
  return 'reason' in found ? `missing prerequisite: ${found.reason}` : false;
}

/** The Kubernetes release the tests run: KWAVE_KUBERNETES, else the newest the module builds. */
export function selectedRelease(): KubernetesRelease {
  const release = pickRelease(undefined);
  if ('reason' in release) throw new Error(release.reason);
  return release;
}
