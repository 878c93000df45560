// The pod rows of `kubectl get pods`: READY, STATUS (the reason kubectl users know: Running,
// ContainerCreating, CrashLoopBackOff, Terminating, Init:0/1 …), RESTARTS with the last restart's
// age, AGE, and with -o wide IP, NODE, NOMINATED NODE, READINESS GATES.
import type { KubeObject } from '../../store.js';
import { getPath, isObject, type JsonObject } from '../json.js';
import { ageOf } from './duration.js';
import type { ColumnDefinition } from './types.js';

export const POD_COLUMNS: ColumnDefinition[] = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name of the object, unique within its namespace.',
    priority: 0,
  },
  {
    name: 'Ready',
    type: 'string',
    format: '',
    description: 'Containers ready out of containers in the pod.',
    priority: 0,
  },
  {
    name: 'Status',
    type: 'string',
    format: '',
    description: 'The pod phase, or the reason a container is not running.',
    priority: 0,
  },
  {
    name: 'Restarts',
    type: 'string',
    format: '',
    description: 'Container restarts, with the time since the last one.',
    priority: 0,
  },
  { name: 'Age', type: 'string', format: '', description: 'Time since the object was created.', priority: 0 },
  { name: 'IP', type: 'string', format: '', description: 'The pod IP address.', priority: 1 },
  { name: 'Node', type: 'string', format: '', description: 'The node the pod is bound to.', priority: 1 },
  {
    name: 'Nominated Node',
    type: 'string',
    format: '',
    description: 'The node the scheduler nominated for a preemption.',
    priority: 1,
  },
  {
    name: 'Readiness Gates',
    type: 'string',
    format: '',
    description: 'Readiness gate conditions that are True out of those declared.',
    priority: 1,
  },
];

const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function terminationText(t: JsonObject, prefix: string): string {
  if (text(t.reason)) return `${prefix}${text(t.reason)}`;
  if (typeof t.signal === 'number' && t.signal !== 0) return `${prefix}Signal:${t.signal}`;
  return `${prefix}ExitCode:${typeof t.exitCode === 'number' ? t.exitCode : 0}`;
}

export function podCells(pod: KubeObject, now: Date): (string | number)[] {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const status = isObject(pod.status) ? pod.status : {};
  const containers = objects(spec.containers);
  const initContainers = objects(spec.initContainers);
  let reason = text(status.reason) || text(status.phase);
  let restarts = 0;
  let lastRestart = 0;
  let ready = 0;
  const noteRestart = (cs: JsonObject) => {
    restarts += typeof cs.restartCount === 'number' ? cs.restartCount : 0;
    const finished = Date.parse(text(getPath(cs, ['lastState', 'terminated', 'finishedAt'])));
    if (!Number.isNaN(finished) && finished > lastRestart) lastRestart = finished;
  };

  let initializing = false;
  objects(status.initContainerStatuses).forEach((cs, i) => {
    if (initializing) return;
    noteRestart(cs);
    const terminated = getPath(cs, ['state', 'terminated']);
    const waiting = getPath(cs, ['state', 'waiting']);
    if (isObject(terminated) && terminated.exitCode === 0) return;
    initializing = true;
    if (isObject(terminated)) reason = terminationText(terminated, 'Init:');
    else if (isObject(waiting) && text(waiting.reason) && waiting.reason !== 'PodInitializing')
      reason = `Init:${text(waiting.reason)}`;
    else reason = `Init:${i}/${initContainers.length}`;
  });

  if (!initializing) {
    restarts = 0;
    let running = false;
    // Later containers' reasons win, as kubectl reads the list from the end.
    for (const cs of [...objects(status.containerStatuses)].reverse()) {
      noteRestart(cs);
      const waiting = getPath(cs, ['state', 'waiting']);
      const terminated = getPath(cs, ['state', 'terminated']);
      if (isObject(waiting) && text(waiting.reason)) reason = text(waiting.reason);
      else if (isObject(terminated)) reason = terminationText(terminated, '');
      else if (cs.ready === true && isObject(getPath(cs, ['state', 'running']))) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) {
      const readyCondition = objects(status.conditions).find((c) => c.type === 'Ready');
      reason = readyCondition?.status === 'True' ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';

  const restartText =
    lastRestart > 0 && restarts > 0
      ? `${restarts} (${ageOf(new Date(lastRestart).toISOString(), now)} ago)`
      : String(restarts);
  const gates = objects(spec.readinessGates);
  const conditions = objects(status.conditions);
  const gatesText = gates.length
    ? `${gates.filter((g) => conditions.some((c) => c.type === g.conditionType && c.status === 'True')).length}/${gates.length}`
    : '<none>';
  return [
    pod.metadata.name,
    `${ready}/${containers.length}`,
    reason,
    restartText,
    ageOf(pod.metadata.creationTimestamp, now),
    text(status.podIP) || '<none>',
    text(spec.nodeName) || '<none>',
    text(status.nominatedNodeName) || '<none>',
    gatesText,
  ];
}
