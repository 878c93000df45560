// kwave in-cluster as deploy/rbac.yaml's ServiceAccount on the real control plane: taking any one
// permission away refuses the run with exit 2 naming it, nothing written (optional ones only
// warn), and no request falls outside deploy/rbac.yaml. The usage runs and the "every grant used"
// audit are rbac.test.ts; both are in helpers/rbacSuite.ts. Real backend only.
import { rbacSuite } from './helpers/rbacSuite.js';

rbacSuite('rules');
