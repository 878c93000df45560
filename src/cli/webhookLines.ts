// `kwave plan`'s lines about the admission webhooks that would judge the run's writes.
import type { AdmissionWebhooks } from '../session/admissionWebhooks.js';

export function webhookLines(w: AdmissionWebhooks): string[] {
  if ('unknown' in w) return ['', `admission webhooks on kwave's writes: unknown (${w.unknown})`];
  if (w.rows.length === 0) return [];
  const fail = w.rows.filter((r) => r.failurePolicy === 'Fail').length;
  return [
    '',
    `admission webhooks on kwave's writes (${w.rows.length}; ${fail} with failurePolicy Fail refuse a write while they are down):`,
    ...w.rows.map((r) => {
      const where = [
        r.namespaceSelector ? `namespaces ${r.namespaceSelector}` : undefined,
        r.objectSelector ? `objects ${r.objectSelector}` : undefined,
      ].filter(Boolean);
      return `  ${r.kind} ${r.configuration}/${r.webhook}: ${r.writes.join(', ')}; failurePolicy ${r.failurePolicy}${where.length ? `; ${where.join(', ')}` : ''}`;
    }),
  ];
}
