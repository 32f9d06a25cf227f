import type { z } from 'zod';
import { GROUP, KINDS, VERSION, type KindModel, type KindName, type SpecRule } from '@vtl/gitops';

export { GROUP, VERSION };
/** `kubectl get vtl` lists every resource of the appliance. */
export const CATEGORY = 'vtl';

export type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'date';

/** An `additionalPrinterColumns` entry; `.spec` paths are checked against the schema by the tests. */
export interface PrinterColumn {
  name: string;
  type: ColumnType;
  jsonPath: string;
  description?: string;
  /** 0 shows by default; higher only with `-o wide`. */
  priority?: number;
}

/** One custom resource: its names, and the gitops model's schemas and rules it is generated from. */
export interface CrdResource {
  kind: KindName;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodObject;
  status: z.ZodObject;
  /** Spec fields that cannot change after creation (`self == oldSelf`). */
  immutableFields: readonly string[];
  /** Refinements JSON Schema cannot express, as CEL over the spec. */
  rules: readonly SpecRule[];
  /** maxLength for strings CEL rules read that the model leaves unbounded (validations.ts). */
  ruleStringBounds?: Record<string, number>;
  /** Longest metadata.name the kind takes, when shorter than Kubernetes' 253. */
  maxNameLength?: number;
  printerColumns: PrinterColumn[];
}

const condition = (type: string, field: 'status' | 'reason') =>
  `.status.conditions[?(@.type=="${type}")].${field}`;

/** Ready (and its reason with -o wide) lead every kind's columns; Age ends them (crd.ts). */
const readyColumns: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: condition('Ready', 'status') },
  { name: 'Synced', type: 'string', jsonPath: condition('Synced', 'status'), priority: 1 },
  { name: 'Reason', type: 'string', jsonPath: condition('Ready', 'reason'), priority: 1 },
];

/** What a CRD adds to a kind of the model: short names, the name limit and its columns. */
const EXTRA: Record<
  KindName,
  Pick<CrdResource, 'shortNames' | 'printerColumns' | 'maxNameLength' | 'ruleStringBounds'>
> = {
  TapePool: {
    shortNames: ['vtlpool'],
    // A pool's REST name is at most 32 characters.
    maxNameLength: 32,
    printerColumns: [
      { name: 'Node', type: 'string', jsonPath: '.spec.node' },
      { name: 'Path', type: 'string', jsonPath: '.spec.path' },
      { name: 'State', type: 'string', jsonPath: '.status.state' },
    ],
  },
  TapeRemote: {
    shortNames: ['vtlremote'],
    printerColumns: [
      { name: 'Endpoint', type: 'string', jsonPath: '.spec.endpoint' },
      { name: 'Bucket', type: 'string', jsonPath: '.spec.bucket' },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.prefix', priority: 1 },
      { name: 'Tested', type: 'boolean', jsonPath: '.status.lastTestOk' },
    ],
  },
  VirtualTapeLibrary: {
    shortNames: ['vtlib'],
    printerColumns: [
      { name: 'Product', type: 'string', jsonPath: '.spec.product' },
      { name: 'Drive', type: 'string', jsonPath: '.spec.driveProduct', priority: 1 },
      { name: 'Drives', type: 'integer', jsonPath: '.spec.numDrives' },
      { name: 'Pool', type: 'string', jsonPath: '.spec.poolRef' },
      { name: 'Activation', type: 'string', jsonPath: '.spec.activation', priority: 1 },
      { name: 'Serial', type: 'string', jsonPath: '.status.serial', priority: 1 },
      { name: 'State', type: 'string', jsonPath: '.status.state' },
    ],
  },
  TapeInitiator: {
    shortNames: ['vtlinit'],
    // RFC 3720: an iSCSI name is at most 223 bytes (a WWPN far less); the fabric rules read it.
    ruleStringBounds: { wwpn: 223 },
    printerColumns: [
      { name: 'WWPN', type: 'string', jsonPath: '.spec.wwpn' },
      { name: 'Alias', type: 'string', jsonPath: '.spec.alias', priority: 1 },
      { name: 'Applied', type: 'boolean', jsonPath: '.status.applied' },
      { name: 'Logged-In', type: 'boolean', jsonPath: '.status.loggedIn' },
    ],
  },
  ApplianceSettings: {
    shortNames: ['vtlsettings'],
    printerColumns: [],
  },
};

const resource = (model: KindModel): CrdResource => ({
  kind: model.kind,
  plural: model.plural,
  singular: model.singular,
  description: model.description,
  spec: model.spec,
  status: model.status,
  immutableFields: model.immutableFields,
  rules: model.rules,
  ...EXTRA[model.kind],
  printerColumns: [
    ...readyColumns.slice(0, 1),
    ...EXTRA[model.kind].printerColumns,
    ...readyColumns.slice(1),
  ],
});

/** Every kind of the gitops model (@vtl/gitops KINDS) as a custom resource. */
export const RESOURCES: CrdResource[] = Object.values(KINDS).map(resource);
