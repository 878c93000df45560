// /sim/stats on the real backend: `requests` (and `refused`, by the answer's code) read from the
// apiserver's audit log, by user, for every client but the node agent and the control plane's
// own components (any `system:` user: controller-manager, scheduler, the apiserver's loopback
// client, controllers' service accounts); `maxNotReady`/`notReady` from the agent's pod watch, as
// the embedded backend derives them from its store.
import { AuditTail, requestKey } from '../controlPlane/index.js';
import { SimStats, type StatsSnapshot } from '../stats.js';

export class RealStats {
  /** Readiness per namespace (fed by the agent's watch) and the request counts read so far. */
  readonly counts = new SimStats();
  private readonly tail: AuditTail;

  constructor(
    auditLogPath: string,
    /** The node agent's and the simulator's own users. */
    private readonly ownUsers: readonly string[],
  ) {
    this.tail = new AuditTail(auditLogPath);
  }

  /** Counts the requests the audit log holds since the last read. */
  private catchUp(): void {
    for (const r of this.tail.read()) {
      if (this.ownUsers.includes(r.user) || r.user.startsWith('system:')) continue;
      const key = requestKey(r);
      if (!key) continue;
      const space = key.indexOf(' ');
      const verb = key.slice(0, space);
      const resource = key.slice(space + 1);
      this.counts.countRequest(verb, resource);
      if (r.code !== undefined && r.code >= 400) this.counts.countRefused(verb, resource);
    }
  }

  snapshot(): StatsSnapshot {
    this.catchUp();
    return this.counts.snapshot();
  }

  /** Zeroes the counts: what the log holds so far is read and dropped. */
  reset(): StatsSnapshot {
    this.catchUp();
    this.counts.reset();
    return this.counts.snapshot();
  }
}
