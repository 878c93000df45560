// The real Prometheus and Pushgateway for tests (src/cli/prometheusProcess.ts); whether they
// are installed is prerequisites.ts's question.
export { findOnPath, freePort, sampleCount, startPrometheus, startPushgateway, waitFor, type InstantResult, type PrometheusServer } from '../../../src/cli/prometheusProcess.js';
