// Kubernetes name rules the plan must respect before anything reaches an API server:
// DNS-1123 labels (namespaces, container names, plan names), label keys and label values.
// Each check returns undefined when the text is fine, or the "found …" half of a message.

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export const DNS_LABEL_EXPECTED =
  'a DNS-1123 label (lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters)';
export const LABEL_KEY_EXPECTED =
  'a label key: an optional DNS subdomain prefix and "/", then a name of at most 63 letters, digits, "-", "_" or "." that starts and ends with a letter or digit';
export const LABEL_VALUE_EXPECTED =
  'a label value: empty, or at most 63 letters, digits, "-", "_" or "." that starts and ends with a letter or digit';

const quoted = (s: string) => JSON.stringify(s.length > 70 ? s.slice(0, 70) + '…' : s);

export function dnsLabelProblem(text: string): string | undefined {
  if (text.length > 63) return `${quoted(text)} (${text.length} characters)`;
  return DNS_LABEL.test(text) ? undefined : quoted(text);
}

export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined) {
    if (prefix.length === 0) return `${quoted(key)} (empty prefix before "/")`;
    if (prefix.length > 253) return `${quoted(key)} (a prefix of ${prefix.length} characters)`;
    if (!DNS_SUBDOMAIN.test(prefix)) return `${quoted(key)} (the prefix is not a lowercase DNS subdomain)`;
  }
  if (name.length === 0) return `${quoted(key)} (empty name)`;
  if (name.length > 63) return `${quoted(key)} (a name of ${name.length} characters)`;
  if (!LABEL_NAME.test(name)) return quoted(key);
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return `${quoted(value)} (${value.length} characters)`;
  return LABEL_NAME.test(value) ? undefined : quoted(value);
}
