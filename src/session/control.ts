// The runner's side of remote control (`kwave pause | resume | abort`): follows the decisions
// ConfigMap `kwave-<plan>.control` (which the runner only reads) with a watch (no polling) and
// tells the runner, through the RemoteControl port, whether a pause for its revision stands and
// whether an abort addressed to its identity has come. Only the `control.json` key matters here;
// approvals arrive too and change nothing.
import type { Cluster } from '../cluster/cluster.js';
import { watchConfigMap } from '../cluster/configMapWatch.js';
import type { KubeError } from '../cluster/kubeError.js';
import { CONTROL_KEY, controlFor, decodeControl, type ControlView } from '../record/control.js';
import { controlName } from '../record/record.js';
import type { ControlNote, RemoteControl } from '../rollout/runnerDeps.js';

export interface RecordControl extends RemoteControl {
  /** Resolves once the record has been read once (so a run starts knowing whether it is paused). */
  ready: Promise<void>;
  close(): void;
}

const note = (r: { by: string; at: string } | undefined): ControlNote | undefined =>
  r ? { by: r.by, at: r.at } : undefined;

export function followControl(
  cluster: Pick<Cluster, 'getConfigMap' | 'watchConfigMaps'>,
  options: {
    /** The plan's `controlNamespace`. */
    namespace: string;
    plan: string;
    revision: string;
    identity: string;
    onError?: (err: KubeError) => void;
    onProblem?: (problem: string) => void;
  },
): RecordControl {
  const stop = new AbortController();
  const listeners = new Set<() => void>();
  let view: ControlView = {};
  let lastResume: { by: string; at: string } | undefined;
  let lastText: string | undefined;
  let problemShown: string | undefined;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  void watchConfigMap(
    cluster,
    options.namespace,
    controlName(options.plan),
    (cm) => {
      markReady();
      const text = cm?.data?.[CONTROL_KEY];
      if (text === lastText) return;
      lastText = text;
      const decoded = decodeControl(text);
      if (decoded.problem && decoded.problem !== problemShown) options.onProblem?.(decoded.problem);
      problemShown = decoded.problem;
      const next = controlFor(decoded.state, options.revision, options.identity);
      lastResume = [...decoded.state.history].reverse().find((r) => r.action === 'resume');
      const changed = next.paused?.at !== view.paused?.at || next.abort?.at !== view.abort?.at;
      view = next;
      if (changed) for (const l of listeners) l();
    },
    { signal: stop.signal, ...(options.onError ? { onError: options.onError } : {}) },
  );
  return {
    ready,
    paused: () => note(view.paused),
    aborted: () => note(view.abort),
    resumed: () => note(lastResume),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      stop.abort();
      markReady();
    },
  };
}
