// Who kwave is to the API server, and what it may do there: a SelfSubjectReview,
// SelfSubjectRulesReviews and SelfSubjectAccessReviews, which every authenticated user may create.
import { objectAnswer } from './answers.js';
import { KubeError } from './kubeError.js';
import type { Requester } from './requester.js';
import type { AccessAnswer, AccessQuestion, ResourceRule, RulesAnswer } from './requestShapes.js';

export async function reviewAccess(requester: Requester, need: AccessQuestion): Promise<AccessAnswer | undefined> {
  const [resource, subresource] = need.resource.split('/') as [string, string | undefined];
  const attributes = {
    verb: need.verb,
    group: need.group,
    resource,
    ...(subresource ? { subresource } : {}),
    ...(need.namespace ? { namespace: need.namespace } : {}),
    ...(need.name ? { name: need.name } : {}),
  };
  const body = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: attributes },
  };
  try {
    const review = (await requester.wire(
      { verb: 'create', resource: 'selfsubjectaccessreviews' },
      { method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body },
    )) as { status?: { allowed?: boolean; reason?: string } } | undefined;
    return { allowed: review?.status?.allowed === true, reason: review?.status?.reason ?? '' };
  } catch (err) {
    if (err instanceof KubeError && (err.code === 404 || err.code === 405)) return undefined;
    throw err;
  }
}

/** The rules the identity has in `namespace` (cluster-wide ones included); undefined without the API. */
export async function reviewRules(requester: Requester, namespace: string): Promise<RulesAnswer | undefined> {
  const body = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectRulesReview',
    spec: { namespace },
  };
  try {
    const review = (await requester.wire(
      { verb: 'create', resource: 'selfsubjectrulesreviews' },
      { method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', body },
    )) as { status?: { resourceRules?: ResourceRule[]; incomplete?: boolean } } | undefined;
    return { resourceRules: review?.status?.resourceRules ?? [], incomplete: review?.status?.incomplete === true };
  } catch (err) {
    if (err instanceof KubeError && (err.code === 404 || err.code === 405)) return undefined;
    throw err;
  }
}

export async function whoAmI(requester: Requester): Promise<string | undefined> {
  try {
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
    const review = (await objectAnswer(
      requester,
      { verb: 'create', resource: 'selfsubjectreviews' },
      { method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', body },
    )) as {
      status?: { userInfo?: { username?: string } };
    };
    return review.status?.userInfo?.username || undefined;
  } catch (err) {
    if (err instanceof KubeError && (err.code === 404 || err.code === 403)) return undefined;
    throw err;
  }
}
