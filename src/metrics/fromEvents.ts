// Feeds kwave's metrics from the rollout's events, so the runner knows nothing of Prometheus.
// kwave_rollout_pods is the one count of rollout/podCounts.ts, the record's and the terminal's too.
import type { EventSink, RolloutEvent } from '../rollout/events.js';
import { countPods, initialPodCounts } from '../rollout/podCounts.js';
import { isFailure } from '../rollout/podEnd.js';
import type { KwaveMetrics } from './registry.js';

/** `dryRunGates`: the names of the plan's dry-run gates, so their series start at zero with dry_run="true". */
export function metricsSink(
  metrics: KwaveMetrics,
  gateNames: readonly string[],
  dryRunGates: ReadonlySet<string> = new Set(),
): EventSink {
  let pods = initialPodCounts();
  return (e: RolloutEvent) => {
    const before = pods;
    pods = countPods(pods, e);
    switch (e.event) {
      case 'rollout-start':
        metrics.declareWaves(e.waves);
        metrics.declareGates(gateNames, dryRunGates);
        metrics.setPhase('Progressing');
        metrics.setUnavailable(0, e.budget);
        break;
      case 'wave-start':
        metrics.setWave(e.wave);
        break;
      case 'pod-end':
        // Reverts (a `kwave rollback` run, or a rollback after a halt) are counted apart from upgrades.
        if (before.rollback !== undefined || before.direction === 'rollback') {
          if (e.result === 'rolled-back') metrics.podRolledBack('succeeded');
          else if (e.result === 'failed') metrics.podRolledBack('failed');
          break;
        }
        if (e.result === 'upgraded') metrics.podUpgradeConfirmedByImageID(e.wave, e.durationMs / 1000);
        if (e.result === 'upgraded' && e.resized) metrics.podResized(e.durationMs / 1000);
        if (e.result === 'upgraded' && e.unreadyMs !== undefined) metrics.podUnready(e.unreadyMs / 1000);
        if (isFailure(e.result)) metrics.podUpgradeFailed(e.wave, e.reason ?? e.result);
        break;
      case 'budget-wait':
        metrics.setUnavailable(e.unavailable, e.budget);
        break;
      case 'gate-measurement':
        metrics.gateMeasured(e.gate, e.phase, e.dryRun === true);
        return;
      case 'rollout-end':
        metrics.setPhase(e.phase);
        break;
      default:
        break;
    }
    if (pods.counts !== before.counts) metrics.setPodStates(pods.counts);
  };
}
