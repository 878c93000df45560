// How kwave asks for ConfigMaps (the rollout record): get, create, replace, merge-patch and
// watch, all in the control lane (requester.ts), never behind pod traffic.
import { PatchStrategy, type V1ConfigMap } from '@kubernetes/client-node';
import { objectAnswer } from './answers.js';
import type { KubeError } from './kubeError.js';
import { configMapPath, configMapsPath } from './paths.js';
import type { LaneOptions, Requester } from './requester.js';
import type { ConfigMapMergePatch, WatchHandle, WatchPodsQuery } from './requestShapes.js';

const CONTROL: LaneOptions = Object.freeze({ lane: 'control' });

export async function getConfigMap(requester: Requester, namespace: string, name: string): Promise<V1ConfigMap> {
  return (await objectAnswer(
    requester,
    { verb: 'get', resource: 'configmaps', namespace },
    { method: 'GET', path: configMapPath(namespace, name) },
    CONTROL,
  )) as V1ConfigMap;
}

export async function createConfigMap(
  requester: Requester,
  namespace: string,
  body: V1ConfigMap,
): Promise<V1ConfigMap> {
  return (await objectAnswer(
    requester,
    { verb: 'create', resource: 'configmaps', namespace },
    { method: 'POST', path: configMapsPath(namespace), body },
    CONTROL,
  )) as V1ConfigMap;
}

export function watchConfigMaps(
  requester: Requester,
  namespace: string,
  query: WatchPodsQuery,
  onEvent: (type: string, object: unknown) => void,
  onDone: (err: KubeError | undefined) => void,
): Promise<WatchHandle> {
  return requester.watch(
    { verb: 'watch', resource: 'configmaps', namespace },
    configMapsPath(namespace),
    query,
    onEvent,
    onDone,
    'control',
  );
}

export async function updateConfigMap(
  requester: Requester,
  namespace: string,
  body: V1ConfigMap,
): Promise<V1ConfigMap> {
  const name = body.metadata?.name;
  if (!name) throw new Error('updateConfigMap: metadata.name is required');
  return (await objectAnswer(
    requester,
    { verb: 'update', resource: 'configmaps', namespace },
    { method: 'PUT', path: configMapPath(namespace, name), body },
    CONTROL,
  )) as V1ConfigMap;
}

export async function patchConfigMap(
  requester: Requester,
  namespace: string,
  name: string,
  body: ConfigMapMergePatch,
): Promise<V1ConfigMap> {
  const req = {
    method: 'PATCH',
    path: configMapPath(namespace, name),
    body,
    contentType: PatchStrategy.MergePatch,
  } as const;
  return (await objectAnswer(
    requester,
    { verb: 'patch', resource: 'configmaps', namespace },
    req,
    CONTROL,
  )) as V1ConfigMap;
}
