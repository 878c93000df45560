// Turns objects into a meta.k8s.io Table for `kubectl get` (lists, single objects, watch events).
import type { KubeObject, Resource } from '../../store.js';
import { APPS_PRINTERS, OTHER_PRINTERS, type Printer } from './others.js';
import { POD_COLUMNS, podCells } from './pods.js';
import type { Table, TableRow } from './types.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

const PRINTERS: Readonly<Record<string, Printer>> = {
  ...OTHER_PRINTERS,
  ...APPS_PRINTERS,
  pods: { columns: POD_COLUMNS, cells: podCells },
};

function rowObject(obj: KubeObject, include: IncludeObject, tableApiVersion: string): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: tableApiVersion, metadata: obj.metadata };
}

export interface TableOptions {
  /** meta.k8s.io/v1 or meta.k8s.io/v1beta1, as negotiated. */
  apiVersion: string;
  include: IncludeObject;
  /** Watch events after the first carry no column definitions. */
  withColumns: boolean;
  now: Date;
}

export function toTable(
  resource: Resource,
  objects: readonly KubeObject[],
  meta: Table['metadata'],
  opts: TableOptions,
): Table {
  const printer = PRINTERS[resource]!;
  const rows: TableRow[] = objects.map((o) => {
    const row: TableRow = { cells: printer.cells(o, opts.now) };
    const object = rowObject(o, opts.include, opts.apiVersion);
    if (object !== undefined) row.object = object;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: opts.apiVersion,
    metadata: meta,
    columnDefinitions: opts.withColumns ? printer.columns : null,
    rows,
  };
}
