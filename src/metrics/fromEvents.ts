// Feeds kwave's metrics from the rollout's events, so the runner knows nothing of Prometheus.
// Pod-state gauges are counts kept here from the same events the terminal shows.
import type { EventSink, RolloutEvent } from '../rollout/events.js';
import { countedAs, emptyCounts, isFailure, type PodState } from '../rollout/podEnd.js';
import type { KwaveMetrics } from './registry.js';

/** `dryRunGates`: the names of the plan's dry-run gates, so their series start at zero with dry_run="true". */
export function metricsSink(
  metrics: KwaveMetrics,
  gateNames: readonly string[],
  dryRunGates: ReadonlySet<string> = new Set(),
): EventSink {
  const counts = emptyCounts();
  // A rollback after a halted upgrade puts upgraded pods back among those still to do; pods whose
  // upgrade failed stay counted as failed.
  const failedHere = new Set<string>();
  let upgrading = false;
  let rollingBack = false;
  const move = (from: PodState, to: PodState) => {
    counts[from] = Math.max(0, counts[from] - 1);
    counts[to]++;
  };
  return (e: RolloutEvent) => {
    switch (e.event) {
      case 'rollout-start':
        upgrading = e.direction === 'upgrade';
        rollingBack = !upgrading;
        metrics.declareWaves(e.waves);
        metrics.declareGates(gateNames, dryRunGates);
        metrics.setPhase('Progressing');
        counts.pending = rollingBack ? 0 : e.selected - e.alreadyDone;
        counts.upgraded = rollingBack ? 0 : e.alreadyDone;
        metrics.setUnavailable(0, e.budget);
        break;
      case 'wave-start':
        metrics.setWave(e.wave);
        break;
      case 'rollback-start':
        rollingBack = true;
        break;
      case 'pod-start':
        if (!rollingBack) move('pending', 'in_progress');
        break;
      case 'pod-end':
        if (rollingBack) {
          if (e.result === 'rolled-back') {
            metrics.podRolledBack('succeeded');
            if (upgrading && !failedHere.has(e.pod)) move('upgraded', 'pending');
          } else if (e.result === 'failed') metrics.podRolledBack('failed');
          break;
        }
        if (e.result === 'upgraded') metrics.podUpgradeConfirmedByImageID(e.wave, e.durationMs / 1000);
        if (e.result === 'upgraded' && e.unreadyMs !== undefined) metrics.podUnready(e.unreadyMs / 1000);
        if (isFailure(e.result)) {
          metrics.podUpgradeFailed(e.wave, e.reason ?? e.result);
          failedHere.add(e.pod);
        }
        move('in_progress', countedAs(e.result));
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
        return;
    }
    metrics.setPodStates(counts);
  };
}
