// The real Kubernetes control plane beside the simulator: find the built binary, start it, read
// its audit log.
export { BUILD_COMMAND, findControlPlaneBinary, type BinaryLookup } from './binary.js';
export { AuditTail, parseAuditLine, readAudit, requestKey, type AuditRecord } from './audit.js';
export { ADMIN_USER, AGENT_USER, type ExtraUser } from './identities.js';
export {
  startControlPlane,
  type ComponentName,
  type ControlPlane,
  type ControlPlaneOptions,
  type KubeconfigOptions,
} from './start.js';
