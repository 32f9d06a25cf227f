import path from 'node:path';
import {
  SCOPE_ALL,
  SCOPE_NONE,
  normalizeInitiatorName,
  normalizeWwpn,
  parseEndpoint,
  type InitiatorRecord,
  type LibrarySpec,
  type PoolSpec,
  type RemoteRecord,
} from '@vtl/api';
import type {
  ApplianceSettingsSpec,
  SecretKeyRef,
  TapeInitiator,
  TapePool,
  TapeRemote,
  VirtualTapeLibrary,
} from './model/index.js';

/**
 * The one mapping between declared objects (camelCase, references by name) and the REST shapes
 * (snake_case bodies, numeric ids). `to*Body` builds the request a REST client would send;
 * `*Comparable` puts a declared spec and a stored record in one comparable form.
 */

export type SecretLookup = (ref: SecretKeyRef) => string | undefined;

export const poolBody = (o: TapePool) => ({
  name: o.metadata.name,
  path: o.spec.path,
  ...(o.spec.node ? { node: o.spec.node } : {}),
});

export const libraryBody = (o: VirtualTapeLibrary, poolId: number) => ({
  name: o.metadata.name,
  product: o.spec.product,
  drive_product: o.spec.driveProduct,
  num_drives: o.spec.numDrives,
  num_slots: o.spec.numSlots,
  num_map: o.spec.numMap,
  label_prefix: o.spec.labelPrefix,
  pool_id: poolId,
});

function chapBody(o: TapeInitiator, secret: SecretLookup) {
  const c = o.spec.chap;
  if (!c) return undefined;
  return {
    username: c.username,
    secret: secret(c.secretRef) ?? '',
    ...(c.mutualUsername && c.mutualSecretRef
      ? { mutual_username: c.mutualUsername, mutual_secret: secret(c.mutualSecretRef) ?? '' }
      : {}),
  };
}

/** Body of POST /api/targets/acls; `libraryIds` resolves libraryRefs. */
export function initiatorCreateBody(
  o: TapeInitiator,
  libraryIds: number[] | undefined,
  secret: SecretLookup,
) {
  const chap = chapBody(o, secret);
  return {
    wwpn: o.spec.wwpn,
    alias: o.spec.alias ?? o.metadata.name,
    ...(o.spec.fabric ? { fabric: o.spec.fabric } : {}),
    ...(o.spec.ports ? { ports: o.spec.ports } : {}),
    ...(libraryIds ? { libraries: libraryIds } : {}),
    ...(chap ? { chap } : {}),
  };
}

/**
 * Body of PUT /api/targets/acls/{wwpn} with the changed fields only. PUT cannot widen a scope back
 * to "all" (an omitted field keeps the stored one); the planner refuses that change (plan.ts).
 */
export function initiatorUpdateBody(
  o: TapeInitiator,
  libraryIds: number[] | undefined,
  secret: SecretLookup,
  fields: readonly string[],
) {
  const body: Record<string, unknown> = {};
  if (fields.includes('alias')) body.alias = o.spec.alias ?? o.metadata.name;
  if (fields.includes('ports')) body.ports = o.spec.ports;
  if (fields.includes('libraryRefs')) body.libraries = libraryIds;
  if (fields.includes('chap')) body.chap = chapBody(o, secret) ?? null;
  return body;
}

export function remoteBody(o: TapeRemote, secretKey: string) {
  return {
    name: o.metadata.name,
    endpoint: o.spec.endpoint,
    region: o.spec.region,
    bucket: o.spec.bucket,
    prefix: o.spec.prefix,
    access_key: o.spec.accessKey,
    use_ssl: o.spec.useSsl,
    path_style: o.spec.pathStyle,
    secret_key: secretKey,
  };
}

const bool01 = (b: boolean) => (b ? '1' : '0');

/** The setting keys a declared ApplianceSettings manages, with their REST values. */
export function settingsBody(spec: ApplianceSettingsSpec, remoteId: (name: string) => number | undefined) {
  const out: Record<string, string> = {};
  if (spec.apiKeys?.enabled !== undefined) out['apikeys.enabled'] = bool01(spec.apiKeys.enabled);
  if (spec.export?.ieWatcher !== undefined) out['export.ie_watcher'] = spec.export.ieWatcher ? 'on' : 'off';
  if (spec.export?.defaultRemoteRef !== undefined)
    out['export.default_remote'] =
      spec.export.defaultRemoteRef === '' ? '' : String(remoteId(spec.export.defaultRemoteRef) ?? '');
  if (spec.evict?.thresholdPct !== undefined)
    out['evict.threshold_pct'] = spec.evict.thresholdPct === 0 ? '' : String(spec.evict.thresholdPct);
  if (spec.fc?.disabledPorts !== undefined)
    out['fc.disabled_ports'] = spec.fc.disabledPorts.map((p) => normalizeWwpn(p) ?? p).join(',');
  if (spec.system?.name !== undefined) out['system.name'] = spec.system.name;
  if (spec.minting?.enabled !== undefined) out['minting.enabled'] = bool01(spec.minting.enabled);
  if (spec.nag?.noOffsiteDismissed !== undefined)
    out['nag.no_offsite_dismissed'] = bool01(spec.nag.noOffsiteDismissed);
  return out;
}

/** The camelCase field of a setting key, for plan output: `export.ie_watcher` → `export.ieWatcher`. */
export const settingField = (key: string) =>
  key === 'apikeys.enabled'
    ? 'apiKeys.enabled'
    : key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/** Stored defaults, so "unset" and "the default" compare equal. */
const SETTING_UNSET: Record<string, string> = {
  'apikeys.enabled': '0',
  'export.ie_watcher': 'off',
  'minting.enabled': '0',
  'nag.no_offsite_dismissed': '0',
};
export const storedSetting = (settings: Record<string, string>, key: string) =>
  settings[key] ?? SETTING_UNSET[key] ?? '';

// ---- Comparable forms: declared spec and record, field by field (camelCase keys). ----

export type Comparable = Record<string, unknown>;

export const poolDeclared = (o: TapePool): Comparable => ({
  ...(o.spec.node ? { node: o.spec.node } : {}),
  path: path.posix.resolve('/', o.spec.path),
});
export const poolStored = (p: PoolSpec, declared: TapePool): Comparable => ({
  ...(declared.spec.node ? { node: p.node } : {}),
  path: p.path,
});

export const libraryDeclared = (o: VirtualTapeLibrary): Comparable => ({
  product: o.spec.product,
  driveProduct: o.spec.driveProduct,
  numDrives: o.spec.numDrives,
  numSlots: o.spec.numSlots,
  numMap: o.spec.numMap,
  labelPrefix: o.spec.labelPrefix,
  poolRef: o.spec.poolRef,
});
export const libraryStored = (l: LibrarySpec, poolName: (id: number) => string): Comparable => ({
  product: l.product,
  driveProduct: l.drive_model,
  numDrives: l.num_drives,
  numSlots: l.num_slots,
  numMap: l.num_ie,
  labelPrefix: l.label_prefix,
  poolRef: poolName(l.home_pool),
});

const sorted = (v: readonly string[] | undefined) => (v === undefined ? undefined : [...new Set(v)].sort());
const scopeList = (scope: string) =>
  scope === SCOPE_ALL ? undefined : scope === SCOPE_NONE ? [] : scope.split(',');

export const initiatorName = (wwpn: string) => normalizeInitiatorName(wwpn);

export function initiatorDeclared(o: TapeInitiator, secret: SecretLookup): Comparable {
  const id = normalizeInitiatorName(o.spec.wwpn);
  const chap = o.spec.chap;
  return {
    wwpn: id?.name ?? o.spec.wwpn,
    fabric: o.spec.fabric ?? id?.fabric ?? 'fc',
    alias: o.spec.alias ?? o.metadata.name,
    ports: sorted(o.spec.ports?.map((p) => normalizeWwpn(p) ?? p)),
    libraryRefs: sorted(o.spec.libraryRefs),
    chap: chap
      ? {
          username: chap.username,
          secret: secret(chap.secretRef),
          mutual_username: chap.mutualUsername ?? '',
          mutual_secret: chap.mutualSecretRef ? secret(chap.mutualSecretRef) : '',
        }
      : undefined,
  };
}

export function initiatorStored(
  r: InitiatorRecord,
  libraryName: (id: number) => string,
  chapSecret: { secret: string; mutual_secret: string } | undefined,
): Comparable {
  return {
    wwpn: r.wwpn,
    fabric: r.fabric,
    alias: r.alias,
    ports: sorted(scopeList(r.ports)),
    libraryRefs: sorted(scopeList(r.libraries)?.map((id) => libraryName(Number(id)))),
    chap: r.chap
      ? {
          username: r.chap.username,
          secret: chapSecret?.secret,
          mutual_username: r.chap.mutual_username,
          mutual_secret: chapSecret?.mutual_secret ?? '',
        }
      : undefined,
  };
}

export function remoteDeclared(o: TapeRemote, secret: SecretLookup): Comparable {
  const parsed = parseEndpoint(o.spec.endpoint.trim());
  const ep = typeof parsed === 'string' ? { hostPort: o.spec.endpoint } : parsed;
  return {
    endpoint: ep.hostPort,
    region: o.spec.region.trim(),
    bucket: o.spec.bucket.trim(),
    prefix: o.spec.prefix.trim().replace(/^\/+|\/+$/g, ''),
    accessKey: o.spec.accessKey.trim(),
    useSsl: ep.useSsl ?? o.spec.useSsl,
    pathStyle: o.spec.pathStyle,
    secretRef: secret(o.spec.secretRef),
  };
}

export const remoteStored = (r: RemoteRecord, secretKey: string | undefined): Comparable => ({
  endpoint: r.endpoint,
  region: r.region,
  bucket: r.bucket,
  prefix: r.prefix,
  accessKey: r.access_key,
  useSsl: r.use_ssl,
  pathStyle: r.path_style,
  secretRef: secretKey,
});

/** Fields whose values differ (secret values compared, never shown: only the field name is). */
export function changedFields(declared: Comparable, stored: Comparable): string[] {
  return Object.keys(declared).filter((k) => JSON.stringify(declared[k]) !== JSON.stringify(stored[k]));
}
