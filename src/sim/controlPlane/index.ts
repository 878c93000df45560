// The real Kubernetes control plane beside the simulator: find the built binary, start it, read
// its audit log.
export { findControlPlaneBinary } from './binary.js';
export { pickRelease, type KubernetesRelease } from './releases.js';
export { AuditTail, readAudit, requestKey, type AuditRecord } from './audit.js';
export { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './start.js';
