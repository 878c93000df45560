// The plan's text as the rollout record stores it: the URLs of webhook gates and notification
// receivers (`spec.gates[].webhook.url`, `spec.notify[].url`) replaced by their redactUrl form
// (`"https://hooks.slack.com/…"`), at the field and wherever else the same URL is written (an
// anchor's value, a comment). Everything else stays as written, so the stored text still shows
// what ran. The record is readable by anyone who may read ConfigMaps in the namespace; a URL's
// path, query or userinfo may be a credential (docs/record.md).
import { isScalar } from 'yaml';
import { hideUrlIn, redactUrl } from '../redactUrl.js';
import type { Segment } from './path.js';
import { parseYaml } from './yamlSource.js';

/** Paths of the URL fields whose values are shown only redacted, present in `value` as strings. */
function secretUrlPaths(value: unknown): { path: Segment[]; url: string }[] {
  const spec = (value as { spec?: { gates?: unknown; notify?: unknown } } | null)?.spec;
  const found: { path: Segment[]; url: string }[] = [];
  const add = (path: Segment[], url: unknown) => {
    if (typeof url === 'string') found.push({ path, url });
  };
  if (Array.isArray(spec?.gates))
    spec.gates.forEach((g: { webhook?: { url?: unknown } } | null, i) =>
      add(['spec', 'gates', i, 'webhook', 'url'], g?.webhook?.url),
    );
  if (Array.isArray(spec?.notify))
    spec.notify.forEach((n: { url?: unknown } | null, i) => add(['spec', 'notify', i, 'url'], n?.url));
  return found;
}

const ANY_URL = /\bhttps?:\/\/[^\s"'<>`]+/g;

/** `text` with those URLs redacted; text that is no plan YAML has every http(s) URL in it redacted. */
export function redactPlanText(text: string): string {
  if (!text.includes('://')) return text;
  const parsed = parseYaml(text);
  if (!parsed.ok) return text.replace(ANY_URL, (url) => redactUrl(url));
  const { doc, value } = parsed.source;
  const edits: { start: number; end: number; text: string }[] = [];
  const urls = new Set<string>();
  for (const { path, url } of secretUrlPaths(value)) {
    const shown = redactUrl(url);
    if (shown === url) continue;
    urls.add(url);
    // An alias (`url: *hook`) is left as written: its anchored value is edited where it stands.
    const node = doc.getIn(path, true);
    if (!isScalar(node) || !node.range) continue;
    const [start, end] = node.range;
    // A block scalar's source ends with its line break; keep it, or the next key joins this line.
    edits.push({ start, end, text: JSON.stringify(shown) + (text.slice(start, end).endsWith('\n') ? '\n' : '') });
  }
  let out = text;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  for (const url of urls) out = hideUrlIn(out, url);
  return out;
}
