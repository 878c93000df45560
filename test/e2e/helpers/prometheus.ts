// The real Prometheus and Pushgateway for tests (src/cli/prometheusProcess.ts); whether they
// are installed is prerequisites.ts's question.
import type { InstantResult } from '../../../src/cli/prometheusProcess.js';

export {
  freePort,
  startPrometheus,
  startPushgateway,
  waitFor,
  type InstantResult,
  type PrometheusServer,
} from '../../../src/cli/prometheusProcess.js';

/** Number of samples in a vector or scalar answer (0 for an empty vector). */
export function sampleCount(r: InstantResult): number {
  if (r.resultType === 'scalar') return 1;
  return Array.isArray(r.result) ? r.result.length : 0;
}
