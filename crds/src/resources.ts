import type { z } from 'zod';
import { CreatePoolRequest, DeclareLibraryRequest } from '@vtl/api';
import { InitiatorSpec } from './schemas/initiator.js';
import { RemoteSpec } from './schemas/remote.js';

export const GROUP = 'vtl.appliance.io';
export const VERSION = 'v1alpha1';
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

/** One custom resource: its names and the zod schema its `spec` is generated from. */
export interface CrdResource {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodObject;
  printerColumns: PrinterColumn[];
}

/** The resources a GitOps source turns into API calls; `spec` is the body of the create call. */
export const RESOURCES: CrdResource[] = [
  {
    kind: 'TapePool',
    plural: 'tapepools',
    singular: 'tapepool',
    shortNames: ['vtlpool'],
    description:
      'A pool: a directory on a node that holds cartridge images. spec is the body of POST /api/pools.',
    spec: CreatePoolRequest,
    printerColumns: [
      { name: 'Node', type: 'string', jsonPath: '.spec.node' },
      { name: 'Path', type: 'string', jsonPath: '.spec.path' },
      { name: 'State', type: 'string', jsonPath: '.status.state' },
    ],
  },
  {
    kind: 'VirtualTapeLibrary',
    plural: 'virtualtapelibraries',
    singular: 'virtualtapelibrary',
    shortNames: ['vtlib'],
    description:
      'An emulated tape library (changer and LTO drives) homed on a pool. spec is the body of POST /api/libraries.',
    spec: DeclareLibraryRequest,
    printerColumns: [
      { name: 'Product', type: 'string', jsonPath: '.spec.product' },
      { name: 'Drive', type: 'string', jsonPath: '.spec.drive_product' },
      { name: 'Drives', type: 'integer', jsonPath: '.spec.num_drives' },
      { name: 'Slots', type: 'integer', jsonPath: '.spec.num_slots', priority: 1 },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.label_prefix' },
      { name: 'Pool', type: 'integer', jsonPath: '.spec.pool_id', priority: 1 },
      { name: 'State', type: 'string', jsonPath: '.status.state' },
    ],
  },
  {
    kind: 'TapeInitiator',
    plural: 'tapeinitiators',
    singular: 'tapeinitiator',
    shortNames: ['vtlinit'],
    description:
      'A backup host initiator allowed through the FC/iSCSI access control. spec is the body of POST /api/targets/acls.',
    spec: InitiatorSpec,
    printerColumns: [
      { name: 'WWPN', type: 'string', jsonPath: '.spec.wwpn' },
      { name: 'Alias', type: 'string', jsonPath: '.spec.alias' },
      { name: 'Applied', type: 'boolean', jsonPath: '.status.applied' },
    ],
  },
  {
    kind: 'TapeRemote',
    plural: 'taperemotes',
    singular: 'taperemote',
    shortNames: ['vtlremote'],
    description:
      'An S3-compatible bucket cartridges are exported to. spec is the body of POST /api/remotes, with the secret key read from a Secret.',
    spec: RemoteSpec,
    printerColumns: [
      { name: 'Endpoint', type: 'string', jsonPath: '.spec.endpoint' },
      { name: 'Bucket', type: 'string', jsonPath: '.spec.bucket' },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.prefix', priority: 1 },
      { name: 'Tested', type: 'boolean', jsonPath: '.status.last_test_ok' },
    ],
  },
];
