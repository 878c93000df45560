// Whether the rules of a SelfSubjectRulesReview grant one of kwave's needs, matched as RBAC
// matches a request against a rule: each of verb, API group and resource must be listed or `*`;
// a subresource is matched whole (`pods/status`, or `*/status`), never by its resource alone; a
// rule that names objects grants only requests for one of those names. Pure.
import type { ResourceRule } from '../cluster/requestShapes.js';
import type { AccessNeed } from './accessNeeds.js';

const lists = (values: readonly string[] | undefined, value: string) =>
  (values ?? []).some((v) => v === '*' || v === value);

function resourceMatches(rule: ResourceRule, resource: string): boolean {
  const slash = resource.indexOf('/');
  return (rule.resources ?? []).some(
    (r) => r === '*' || r === resource || (slash !== -1 && r === `*${resource.slice(slash)}`),
  );
}

export function rulesGrant(rules: readonly ResourceRule[], need: AccessNeed): boolean {
  return rules.some(
    (rule) =>
      lists(rule.verbs, need.verb) &&
      lists(rule.apiGroups, need.group) &&
      resourceMatches(rule, need.resource) &&
      (!rule.resourceNames?.length || (need.name !== undefined && rule.resourceNames.includes(need.name))),
  );
}
