// kwave in-cluster as deploy/rbac.yaml's ServiceAccount on the real control plane: a pre-pull
// rollout, a full rollout killed and resumed, owners kept in step, and the audit log of the whole
// file both ways (every request granted, every grant used). The rule-removal table is
// rbac-rules.test.ts; both are in helpers/rbacSuite.ts. Real backend only.
import { rbacSuite } from './helpers/rbacSuite.js';

rbacSuite('usage');
