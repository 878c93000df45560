// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews` ("who am I", what `kubectl auth whoami`
// sends): the API server echoes the caller's user info, stores nothing. The simulator has one
// credential, its kubeconfig's token, which stands for the admin; it answers with the name the
// real control plane gives its admin (identities.ts: `kwave-admin`, in system:masters).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from './http.js';
import { badRequest } from './status.js';

export const SELF_SUBJECT_REVIEWS_PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const SIM_USER = { username: 'kwave-admin', groups: ['system:masters', 'system:authenticated'] };

export async function serveSelfSubjectReview(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const text = await readBody(req);
  if (text.trim() !== '') {
    try {
      JSON.parse(text);
    } catch (err) {
      throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
    }
  }
  // As kube-apiserver: 201, an unset creationTimestamp encoded as null, the user info in status.
  sendJson(res, 201, {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    status: { userInfo: SIM_USER },
  });
}
