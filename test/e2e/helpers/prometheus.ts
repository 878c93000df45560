// The real Prometheus and Pushgateway for tests (src/cli/prometheusProcess.ts), and a skip
// reason for machines without them (CI installs both).
import { findOnPath } from '../../../src/cli/prometheusProcess.js';

export { findOnPath, freePort, sampleCount, startPrometheus, startPushgateway, waitFor, type InstantResult, type PrometheusServer } from '../../../src/cli/prometheusProcess.js';

/** For `test(..., { skip })`: a reason when the binary is missing, false when present. */
export function skipUnless(binary: string): string | false {
  return findOnPath(binary) ? false : `${binary} is not on PATH (Debian: apt-get install ${binary === 'prometheus' ? 'prometheus' : 'prometheus-pushgateway'}); .ci/run installs it`;
}
