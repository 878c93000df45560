// The cluster's admission webhooks (admissionregistration.k8s.io/v1): the validating and mutating
// webhook configurations, read whole (they are few). `kwave plan` names those that judge kwave's
// writes.
import { listPage } from './answers.js';
import type { Requester } from './requester.js';

export type WebhookKind = 'validating' | 'mutating';

export interface WebhookRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface WebhookSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: SelectorRequirement[];
}

interface Webhook {
  name: string;
  rules?: WebhookRule[];
  failurePolicy?: string;
  namespaceSelector?: WebhookSelector;
  objectSelector?: WebhookSelector;
}

export interface WebhookConfiguration {
  kind: WebhookKind;
  name: string;
  webhooks: Webhook[];
}

/** Every webhook configuration of one kind. */
export async function listWebhookConfigurations(
  requester: Requester,
  kind: WebhookKind,
): Promise<WebhookConfiguration[]> {
  const resource = `${kind}webhookconfigurations` as const;
  const page = listPage(
    await requester.wire(
      { verb: 'list', resource },
      { method: 'GET', path: `/apis/admissionregistration.k8s.io/v1/${resource}` },
    ),
    `list ${resource}`,
  );
  return (page.items as { metadata?: { name?: string }; webhooks?: Webhook[] }[]).map((c) => ({
    kind,
    name: c.metadata?.name ?? '',
    webhooks: c.webhooks ?? [],
  }));
}
