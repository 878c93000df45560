// The admission webhooks that judge kwave's writes: a webhook with `failurePolicy: Fail` that is
// down, slow or strict refuses kwave's patches (a controller's pod webhook — OpenKruise's
// validates every pod UPDATE — sees kwave's image patch and gate condition too). `kwave plan`
// names each webhook whose rules match a write the plan's run makes, with its failure policy and
// its selectors (which namespaces and objects it looks at is left to them: kwave reads no
// namespace's labels). Matching as the API server matches a request against a rule: operation,
// API group, version and resource each listed or `*`; `*` is every resource but no subresource,
// `pods/*` every subresource of pods, `*/*` everything. Pure, but for the read at the end.
import type { WebhookConfiguration, WebhookKind, WebhookRule, WebhookSelector } from '../cluster/admissionRequests.js';
import { isForbidden, KubeError } from '../cluster/kubeError.js';
import type { Plan } from '../plan/types.js';
import { renderSelector } from '../rollout/labelSelector.js';

/** One kind of write kwave makes: `UPDATE pods/status` in API group "" (all at version v1, all namespaced). */
export interface KwaveWrite {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  group: string;
  resource: string;
  /** What it is, for the report. */
  what: string;
}

/** The writes a run of `plan` makes (docs/operating.md lists them with their permissions). */
export function kwaveWrites(plan: Plan): KwaveWrite[] {
  const writes: KwaveWrite[] = [
    { operation: 'UPDATE', group: '', resource: 'pods', what: 'the image patch' },
    { operation: 'UPDATE', group: '', resource: 'pods/status', what: 'the readiness gate' },
    { operation: 'CREATE', group: '', resource: 'configmaps', what: 'the rollout record' },
    { operation: 'UPDATE', group: '', resource: 'configmaps', what: 'the rollout record' },
    { operation: 'CREATE', group: 'coordination.k8s.io', resource: 'leases', what: 'the run lease' },
    { operation: 'UPDATE', group: 'coordination.k8s.io', resource: 'leases', what: 'the run lease' },
    { operation: 'CREATE', group: '', resource: 'events', what: 'Events on failed pods' },
  ];
  if (plan.strategy.prePull)
    writes.push(
      { operation: 'CREATE', group: '', resource: 'pods', what: 'the pre-pull pods' },
      { operation: 'DELETE', group: '', resource: 'pods', what: 'the pre-pull pods' },
    );
  if (plan.owners === 'update')
    for (const resource of ['statefulsets', 'daemonsets'])
      writes.push({ operation: 'UPDATE', group: 'apps', resource, what: "owners' pod templates" });
  return writes;
}

const lists = (values: readonly string[] | undefined, value: string) =>
  (values ?? []).some((v) => v === '*' || v === value);

function resourceMatches(patterns: readonly string[] | undefined, resource: string): boolean {
  const [main, sub] = resource.split('/') as [string, string | undefined];
  return (patterns ?? []).some((p) => {
    if (p === '*/*' || p === resource) return true;
    const [pm, ps] = p.split('/') as [string, string | undefined];
    if (sub === undefined) return ps === undefined && pm === '*';
    return ps !== undefined && (pm === '*' || pm === main) && (ps === '*' || ps === sub);
  });
}

function ruleMatches(rule: WebhookRule, w: KwaveWrite): boolean {
  return (
    lists(rule.operations, w.operation) &&
    lists(rule.apiGroups, w.group) &&
    lists(rule.apiVersions, 'v1') &&
    resourceMatches(rule.resources, w.resource) &&
    (rule.scope === undefined || rule.scope === '*' || rule.scope === 'Namespaced')
  );
}

export interface WebhookRow {
  kind: WebhookKind;
  configuration: string;
  webhook: string;
  /** The writes it judges: `UPDATE pods` … */
  writes: string[];
  /** `Fail` (the default of admissionregistration/v1) refuses a write while the webhook is down. */
  failurePolicy: string;
  /** Label selectors (kubectl syntax) limiting the namespaces and objects it judges, when set. */
  namespaceSelector?: string;
  objectSelector?: string;
}

const selectorText = (s: WebhookSelector | undefined) => (s ? renderSelector(s) || undefined : undefined);

/** The webhooks of `configurations` that judge at least one of `writes`. */
export function webhooksOnWrites(
  configurations: readonly WebhookConfiguration[],
  writes: readonly KwaveWrite[],
): WebhookRow[] {
  const rows: WebhookRow[] = [];
  for (const c of configurations)
    for (const hook of c.webhooks) {
      const judged = writes.filter((w) => (hook.rules ?? []).some((r) => ruleMatches(r, w)));
      if (judged.length === 0) continue;
      const namespaceSelector = selectorText(hook.namespaceSelector);
      const objectSelector = selectorText(hook.objectSelector);
      rows.push({
        kind: c.kind,
        configuration: c.name,
        webhook: hook.name,
        writes: [...new Set(judged.map((w) => `${w.operation} ${w.resource}`))],
        failurePolicy: hook.failurePolicy ?? 'Fail',
        ...(namespaceSelector ? { namespaceSelector } : {}),
        ...(objectSelector ? { objectSelector } : {}),
      });
    }
  return rows;
}

/** The webhooks on a plan's writes; `unknown` says why they could not be listed (forbidden). */
export type AdmissionWebhooks = { rows: WebhookRow[] } | { unknown: string };

export async function readAdmissionWebhooks(
  plan: Plan,
  list: () => Promise<WebhookConfiguration[]>,
): Promise<AdmissionWebhooks> {
  try {
    return { rows: webhooksOnWrites(await list(), kwaveWrites(plan)) };
  } catch (err) {
    if (isForbidden(err))
      return { unknown: 'listing webhook configurations (admissionregistration.k8s.io) is forbidden' };
    // A server without the API (the embedded simulator) has no webhooks.
    if (err instanceof KubeError && err.code === 404) return { rows: [] };
    throw err;
  }
}
