import { z } from 'zod';
import type { SpecRule } from './common.js';
import { TapePool, TapePoolSpec, TapePoolStatus, tapePoolImmutable, tapePoolRules } from './pool.js';
import {
  VirtualTapeLibrary,
  VirtualTapeLibrarySpec,
  VirtualTapeLibraryStatus,
  virtualTapeLibraryImmutable,
  virtualTapeLibraryRules,
} from './library.js';
import {
  TapeInitiator,
  TapeInitiatorSpec,
  TapeInitiatorStatus,
  tapeInitiatorImmutable,
  tapeInitiatorRules,
} from './initiator.js';
import {
  TapeRemote,
  TapeRemoteSpec,
  TapeRemoteStatus,
  tapeRemoteImmutable,
  tapeRemoteRules,
} from './remote.js';
import {
  ApplianceSettings,
  ApplianceSettingsSpec,
  ApplianceSettingsStatus,
  applianceSettingsImmutable,
  applianceSettingsRules,
} from './settings.js';

export * from './common.js';
export * from './pool.js';
export * from './library.js';
export * from './initiator.js';
export * from './remote.js';
export * from './settings.js';

export const KIND_NAMES = [
  'TapePool',
  'TapeRemote',
  'VirtualTapeLibrary',
  'TapeInitiator',
  'ApplianceSettings',
] as const;
export type KindName = (typeof KIND_NAMES)[number];

/** One declared kind: its schemas and the rules a CRD generator turns into CEL. */
export interface KindModel {
  kind: KindName;
  plural: string;
  singular: string;
  description: string;
  /** The whole object (apiVersion, kind, metadata, spec, status). */
  object: z.ZodType;
  spec: z.ZodObject;
  status: z.ZodObject;
  /** Spec fields (dotted paths) that cannot change after creation: CRD `self == oldSelf`. */
  immutableFields: readonly string[];
  /** Refinements JSON Schema cannot express: CRD `x-kubernetes-validations`. */
  rules: readonly SpecRule[];
}

/**
 * Every kind, in the order a sync creates them (a pool before the library it homes, a remote
 * before the settings that name it, libraries before the initiators mapped to them); prune runs
 * in the reverse order.
 */
export const KINDS: Record<KindName, KindModel> = {
  TapePool: {
    kind: 'TapePool',
    plural: 'tapepools',
    singular: 'tapepool',
    description: 'A pool: a directory on a node that holds cartridge images (POST /api/pools).',
    object: TapePool,
    spec: TapePoolSpec,
    status: TapePoolStatus,
    immutableFields: tapePoolImmutable,
    rules: tapePoolRules,
  },
  TapeRemote: {
    kind: 'TapeRemote',
    plural: 'taperemotes',
    singular: 'taperemote',
    description:
      'An S3-compatible bucket cartridges are exported to (POST /api/remotes); the secret by secretRef.',
    object: TapeRemote,
    spec: TapeRemoteSpec,
    status: TapeRemoteStatus,
    immutableFields: tapeRemoteImmutable,
    rules: tapeRemoteRules,
  },
  VirtualTapeLibrary: {
    kind: 'VirtualTapeLibrary',
    plural: 'virtualtapelibraries',
    singular: 'virtualtapelibrary',
    description: 'An emulated tape library (changer and LTO drives) homed on a pool (POST /api/libraries).',
    object: VirtualTapeLibrary,
    spec: VirtualTapeLibrarySpec,
    status: VirtualTapeLibraryStatus,
    immutableFields: virtualTapeLibraryImmutable,
    rules: virtualTapeLibraryRules,
  },
  TapeInitiator: {
    kind: 'TapeInitiator',
    plural: 'tapeinitiators',
    singular: 'tapeinitiator',
    description:
      'A backup host initiator allowed through the FC/iSCSI access control (POST /api/targets/acls).',
    object: TapeInitiator,
    spec: TapeInitiatorSpec,
    status: TapeInitiatorStatus,
    immutableFields: tapeInitiatorImmutable,
    rules: tapeInitiatorRules,
  },
  ApplianceSettings: {
    kind: 'ApplianceSettings',
    plural: 'appliancesettings',
    singular: 'appliancesettings',
    description: 'The appliance settings (PUT /api/settings); one object per appliance.',
    object: ApplianceSettings,
    spec: ApplianceSettingsSpec,
    status: ApplianceSettingsStatus,
    immutableFields: applianceSettingsImmutable,
    rules: applianceSettingsRules,
  },
};

/** Any declared object, after its kind's schema accepted it. */
export type DeclaredObject = TapePool | TapeRemote | VirtualTapeLibrary | TapeInitiator | ApplianceSettings;
