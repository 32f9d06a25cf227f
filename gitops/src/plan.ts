import type { ManagedBy } from '@vtl/api';
import type { ManifestFile, PlanAction, PlanError, PlanResponse } from './contract.js';
import {
  KINDS,
  KIND_NAMES,
  RECREATE_ANNOTATION,
  type DeclaredObject,
  type KindName,
  type SecretKeyRef,
} from './model/index.js';
import { parseManifests, type Located } from './parse.js';
import type { Observed } from './observed.js';
import { specHash } from './hash.js';
import {
  changedFields,
  initiatorDeclared,
  initiatorName,
  initiatorStored,
  libraryDeclared,
  libraryStored,
  poolDeclared,
  poolStored,
  remoteDeclared,
  remoteStored,
  settingField,
  settingsBody,
  storedSetting,
  type SecretLookup,
} from './mapping.js';

/** What the appliance's record of a declared object is: how apply finds it again. */
export type Target =
  | { kind: 'TapePool' | 'VirtualTapeLibrary' | 'TapeRemote'; id: number; name: string }
  | { kind: 'TapeInitiator'; id: string; name: string }
  | { kind: 'ApplianceSettings'; id: 'settings'; name: string };

/** One step of a plan: the action shown, and what apply needs to carry it out. */
export interface Step {
  action: PlanAction;
  /** The declared object (absent for prune). */
  object?: DeclaredObject;
  /** The existing record (absent for create). */
  target?: Target;
  /** The record's values changed outside this source while its declaration did not. */
  drift: boolean;
  /** The spec hash apply records in managed_by. */
  specHash: string;
}

export interface Plan extends PlanResponse {
  steps: Step[];
}

export interface PlanOptions {
  source: string;
  prune: boolean;
}

const ownerOf = (m: ManagedBy | undefined) => m?.source;

/**
 * The sync engine's planner: pure, from the declared files and what the appliance holds to the
 * per-object actions. A set with any error (schema, rule, dangling reference, ownership, a changed
 * immutable field) is invalid, and apply then changes nothing.
 */
export function plan(files: readonly ManifestFile[], observed: Observed, opts: PlanOptions): Plan {
  const parsed = parseManifests(files);
  const errors: PlanError[] = [...parsed.errors];
  const steps: Step[] = [];
  const err = (at: Located, field: string, message: string) =>
    errors.push({
      file: at.file,
      document: at.document,
      ...(at.lineOf(field) === undefined ? {} : { line: at.lineOf(field) }),
      kind: at.object.kind,
      name: at.object.metadata.name,
      field,
      message,
    });

  // Names are unique per kind; one settings object.
  const byKind = new Map<KindName, Located[]>(KIND_NAMES.map((k) => [k, []]));
  for (const at of parsed.objects) {
    const list = byKind.get(at.object.kind) as Located[];
    const twin = list.find((o) => o.object.metadata.name === at.object.metadata.name);
    if (twin)
      err(
        at,
        'metadata.name',
        `${at.object.kind} "${at.object.metadata.name}" is also declared in ${twin.file}`,
      );
    else if (at.object.kind === 'ApplianceSettings' && list.length > 0)
      err(
        at,
        'kind',
        `ApplianceSettings is declared once per appliance; ${list[0]?.file} declares it already`,
      );
    else list.push(at);
  }
  const declared = (k: KindName) => byKind.get(k) as Located[];
  const declaredName = (k: KindName, name: string) =>
    declared(k).some((o) => o.object.metadata.name === name);

  const secret: SecretLookup = (ref: SecretKeyRef) => observed.secrets[ref.name]?.[ref.key];
  const checkSecret = (at: Located, field: string, ref: SecretKeyRef) => {
    if (observed.secrets[ref.name] === undefined)
      err(
        at,
        `${field}.name`,
        `${field}: no secret "${ref.name}" is registered; register it with PUT /api/gitops/secrets/${ref.name}`,
      );
    else if (secret(ref) === undefined)
      err(
        at,
        `${field}.key`,
        `${field}: secret "${ref.name}" has no key "${ref.key}"; add it with PUT /api/gitops/secrets/${ref.name}`,
      );
  };

  const livePools = observed.pools;
  const liveLibraries = observed.libraries.filter((l) => !l.deleting);
  const poolName = (id: number) => livePools.find((p) => p.id === id)?.name ?? `#${id}`;
  const libraryName = (id: number) => liveLibraries.find((l) => l.id === id)?.name ?? `#${id}`;
  const poolExists = (name: string) =>
    declaredName('TapePool', name) || livePools.some((p) => p.name === name);
  const libraryExists = (name: string) =>
    declaredName('VirtualTapeLibrary', name) || liveLibraries.some((l) => l.name === name);
  const remoteExists = (name: string) =>
    declaredName('TapeRemote', name) || observed.remotes.some((r) => r.name === name);

  // References and secrets.
  for (const at of parsed.objects) {
    const o = at.object;
    if (o.kind === 'VirtualTapeLibrary' && !poolExists(o.spec.poolRef))
      err(
        at,
        'spec.poolRef',
        `spec.poolRef: no TapePool "${o.spec.poolRef}" is declared or exists; declare it or fix the name`,
      );
    if (o.kind === 'TapeInitiator') {
      for (const [i, ref] of (o.spec.libraryRefs ?? []).entries())
        if (!libraryExists(ref))
          err(
            at,
            `spec.libraryRefs[${i}]`,
            `spec.libraryRefs[${i}]: no VirtualTapeLibrary "${ref}" is declared or exists`,
          );
      if (o.spec.chap) {
        checkSecret(at, 'spec.chap.secretRef', o.spec.chap.secretRef);
        if (o.spec.chap.mutualSecretRef)
          checkSecret(at, 'spec.chap.mutualSecretRef', o.spec.chap.mutualSecretRef);
      }
    }
    if (o.kind === 'TapeRemote') checkSecret(at, 'spec.secretRef', o.spec.secretRef);
    if (
      o.kind === 'ApplianceSettings' &&
      o.spec.export?.defaultRemoteRef &&
      !remoteExists(o.spec.export.defaultRemoteRef)
    )
      err(
        at,
        'spec.export.defaultRemoteRef',
        `spec.export.defaultRemoteRef: no TapeRemote "${o.spec.export.defaultRemoteRef}" is declared or exists`,
      );
  }
  // One library per pool (the REST rule), checked across the set and the appliance.
  const homes = new Map<string, Located>();
  for (const at of declared('VirtualTapeLibrary')) {
    const o = at.object as Extract<DeclaredObject, { kind: 'VirtualTapeLibrary' }>;
    const other = homes.get(o.spec.poolRef);
    if (other)
      err(
        at,
        'spec.poolRef',
        `spec.poolRef: pool "${o.spec.poolRef}" already homes ${other.object.metadata.name} (${other.file}); one library per pool`,
      );
    homes.set(o.spec.poolRef, at);
    const pool = livePools.find((p) => p.name === o.spec.poolRef);
    const home = pool && liveLibraries.find((l) => l.home_pool === pool.id);
    if (home && home.name !== o.metadata.name)
      err(
        at,
        'spec.poolRef',
        `spec.poolRef: pool "${pool.name}" already homes library ${home.id} (${home.name}); use a free pool`,
      );
  }

  // Per object: match, ownership, diff.
  const matched = {
    pools: new Set<number>(),
    libraries: new Set<number>(),
    initiators: new Set<string>(),
    remotes: new Set<number>(),
  };
  for (const kind of KIND_NAMES) {
    for (const at of declared(kind)) {
      const o = at.object;
      const name = o.metadata.name;
      const hash = specHash(o.spec);
      const base = { kind: o.kind, name, file: at.file };
      let target: Target | undefined;
      let owner: ManagedBy | undefined;
      let fields: string[] = [];
      let activate = false;
      let pending = false;
      if (o.kind === 'TapePool') {
        const rec = livePools.find((p) => p.name === name);
        if (rec) {
          matched.pools.add(rec.id);
          target = { kind: o.kind, id: rec.id, name };
          owner = rec.managed_by;
          fields = changedFields(poolDeclared(o), poolStored(rec, o));
        }
      } else if (o.kind === 'VirtualTapeLibrary') {
        const recs = liveLibraries.filter((l) => l.name === name);
        if (recs.length > 1) {
          err(
            at,
            'metadata.name',
            `${recs.length} libraries are named "${name}" (ids ${recs.map((l) => l.id).join(', ')}); rename all but one through the API`,
          );
          continue;
        }
        const rec = recs[0];
        if (rec) {
          matched.libraries.add(rec.id);
          target = { kind: o.kind, id: rec.id, name };
          owner = rec.managed_by;
          fields = changedFields(libraryDeclared(o), libraryStored(rec, poolName));
          activate = o.spec.activation === 'auto' && rec.state === 'pending_restart';
          pending = o.spec.activation === 'manual' && rec.state === 'pending_restart';
        } else {
          activate = o.spec.activation === 'auto';
          pending = !activate;
        }
      } else if (o.kind === 'TapeInitiator') {
        const id = initiatorName(o.spec.wwpn);
        const rec = id && observed.initiators.find((i) => i.wwpn === id.name);
        const twin = declared('TapeInitiator').find(
          (d) => d !== at && initiatorName((d.object as typeof o).spec.wwpn)?.name === id?.name,
        );
        if (twin)
          err(
            at,
            'spec.wwpn',
            `spec.wwpn: ${twin.object.metadata.name} (${twin.file}) declares the same initiator`,
          );
        if (rec) {
          matched.initiators.add(rec.wwpn);
          target = { kind: o.kind, id: rec.wwpn, name };
          owner = rec.managed_by;
          const stored = initiatorStored(rec, libraryName, observed.chapSecrets[rec.wwpn]);
          const want = initiatorDeclared(o, secret);
          fields = changedFields(want, stored);
          for (const f of ['ports', 'libraryRefs'])
            if (fields.includes(f) && want[f] === undefined)
              err(
                at,
                `spec.${f}`,
                `spec.${f}: the appliance cannot widen a stored scope back to "all"; list the values, or delete the initiator through the API and sync again`,
              );
        }
      } else if (o.kind === 'TapeRemote') {
        const recs = observed.remotes.filter((r) => r.name === name);
        if (recs.length > 1) {
          err(
            at,
            'metadata.name',
            `${recs.length} remotes are named "${name}" (ids ${recs.map((r) => r.id).join(', ')}); rename all but one through the API`,
          );
          continue;
        }
        const rec = recs[0];
        if (rec) {
          matched.remotes.add(rec.id);
          target = { kind: o.kind, id: rec.id, name };
          owner = rec.managed_by;
          fields = changedFields(
            remoteDeclared(o, secret),
            remoteStored(rec, observed.remoteSecrets[rec.id]),
          );
        }
      } else {
        target = { kind: 'ApplianceSettings', id: 'settings', name };
        owner = observed.settingsOwner;
        const want = settingsBody(o.spec, (n) => observed.remotes.find((r) => r.name === n)?.id);
        // A default remote declared in this set and not yet created differs until it is.
        fields = Object.entries(want)
          .filter(
            ([k, v]) =>
              storedSetting(observed.settings, k) !== v ||
              (k === 'export.default_remote' && v === '' && o.spec.export?.defaultRemoteRef),
          )
          .map(([k]) => settingField(k));
      }

      if (owner && owner.source !== opts.source) {
        err(
          at,
          'metadata.name',
          o.kind === 'ApplianceSettings'
            ? `ApplianceSettings are managed by source "${owner.source}" (object "${owner.name}"); the appliance has one set of settings, declared by one source: remove them from this one, or from "${owner.source}" first`
            : `${o.kind} "${name}" is owned by source "${owner.source}"; remove it from one of the two sources`,
        );
        continue;
      }
      const adopt = target !== undefined && o.kind !== 'ApplianceSettings' && !owner;
      if (!target) {
        steps.push({
          action: {
            ...base,
            action: 'create',
            fields: [],
            ...(activate ? { activate } : {}),
            ...(pending ? { pendingActivation: true } : {}),
          },
          object: o,
          drift: false,
          specHash: hash,
        });
        continue;
      }
      const immutable = fields.filter((f) => KINDS[o.kind].immutableFields.includes(f));
      if (immutable.length > 0) {
        if (o.metadata.annotations?.[RECREATE_ANNOTATION] === 'true') {
          steps.push({
            action: {
              ...base,
              action: 'update',
              fields,
              recreate: true,
              ...(activate || o.kind === 'VirtualTapeLibrary'
                ? { activate: (o as { spec: { activation?: string } }).spec.activation === 'auto' }
                : {}),
              reason: `${immutable.join(', ')} changed: deleted and created again (${RECREATE_ANNOTATION})`,
            },
            object: o,
            target,
            drift: false,
            specHash: hash,
          });
          continue;
        }
        const message = `${immutable.map((f) => `spec.${f}`).join(', ')} cannot change once created; put the old value back, or declare a new ${o.kind} under another name, or set the annotation ${RECREATE_ANNOTATION}: "true" to delete and re-create it (destructive)`;
        for (const f of immutable) err(at, `spec.${f}`, message);
        steps.push({
          action: { ...base, action: 'refused', fields: immutable, reason: message },
          object: o,
          target,
          drift: false,
          specHash: hash,
        });
        continue;
      }
      const drift = !!owner && fields.length > 0 && owner.spec_hash === hash;
      const action = fields.length > 0 ? 'update' : 'unchanged';
      const reason = drift
        ? `changed outside source "${opts.source}" (through the API): ${fields.join(', ')} put back to the declared values`
        : adopt
          ? `made through the API; source "${opts.source}" takes it over`
          : undefined;
      steps.push({
        action: {
          ...base,
          action,
          fields,
          ...(reason ? { reason } : {}),
          ...(drift ? { drift } : {}),
          ...(adopt ? { adopt } : {}),
          ...(activate ? { activate } : {}),
          ...(pending ? { pendingActivation: true } : {}),
        },
        object: o,
        target,
        drift,
        specHash: hash,
      });
    }
  }

  // Prune: what this source owns and no longer declares, dependents first.
  if (opts.prune) {
    const prune = (kind: KindName, target: Target) =>
      steps.push({
        action: { kind, name: target.name, action: 'prune', fields: [] },
        target,
        drift: false,
        specHash: '',
      });
    for (const i of observed.initiators)
      if (ownerOf(i.managed_by) === opts.source && !matched.initiators.has(i.wwpn))
        prune('TapeInitiator', { kind: 'TapeInitiator', id: i.wwpn, name: i.managed_by?.name ?? i.wwpn });
    for (const l of liveLibraries)
      if (ownerOf(l.managed_by) === opts.source && !matched.libraries.has(l.id))
        prune('VirtualTapeLibrary', { kind: 'VirtualTapeLibrary', id: l.id, name: l.name });
    for (const r of observed.remotes)
      if (ownerOf(r.managed_by) === opts.source && !matched.remotes.has(r.id))
        prune('TapeRemote', { kind: 'TapeRemote', id: r.id, name: r.name });
    for (const p of livePools)
      if (ownerOf(p.managed_by) === opts.source && !matched.pools.has(p.id))
        prune('TapePool', { kind: 'TapePool', id: p.id, name: p.name });
  }

  return {
    source: opts.source,
    valid: errors.length === 0,
    errors,
    actions: steps.map((s) => s.action),
    steps,
  };
}
