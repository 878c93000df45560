// Name rules of Kubernetes object names, label keys and label values. Each check returns the
// detail of what is wrong (as the API server words it), or undefined when the value is valid.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const LABEL_REGEX_TEXT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN_REGEX_TEXT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const NAME_PART_REGEX_TEXT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';

export function dns1123LabelError(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!DNS1123_LABEL.test(value)) {
    return `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${LABEL_REGEX_TEXT}')`;
  }
  return undefined;
}

export function dns1123SubdomainError(value: string): string | undefined {
  if (value.length > 253) return 'must be no more than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(value)) {
    return `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${SUBDOMAIN_REGEX_TEXT}')`;
  }
  return undefined;
}

/** `prefix/name` or `name`, as label keys, annotation keys and pod condition types are. */
export function qualifiedNameError(value: string): string | undefined {
  const parts = value.split('/');
  let name = value;
  if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    if (prefix.length === 0) return 'prefix part must be non-empty';
    const prefixErr = dns1123SubdomainError(prefix);
    if (prefixErr) return `prefix part ${prefixErr}`;
    name = rest;
  } else if (parts.length > 2) {
    return `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${NAME_PART_REGEX_TEXT}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name)) {
    return `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${NAME_PART_REGEX_TEXT}')`;
  }
  return undefined;
}

export function labelValueError(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(${NAME_PART_REGEX_TEXT})?')`;
  }
  return undefined;
}
