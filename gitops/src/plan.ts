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
import type { SecretLookup } from './mapping.js';
import { PLANNERS, type KindPlanner, type Match, type PlanContext, type Target } from './planners/index.js';

export type { Target };

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
  const livePools = observed.pools;
  const liveLibraries = observed.libraries.filter((l) => !l.deleting);
  /** A kind's planner, typed for any kind (each takes the objects of its own). */
  const plannerOf = (k: KindName) => PLANNERS[k] as KindPlanner<KindName>;
  const ctx: PlanContext = {
    observed,
    livePools,
    liveLibraries,
    err,
    declared,
    exists: (k, name) => declaredName(k, name) || (plannerOf(k).isStored?.(ctx, name) ?? false),
    secret,
    checkSecret(at, field, ref) {
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
    },
    poolName: (id) => livePools.find((p) => p.id === id)?.name ?? `#${id}`,
    libraryName: (id) => liveLibraries.find((l) => l.id === id)?.name ?? `#${id}`,
  };

  // References and secrets, then the checks across a kind's declarations.
  for (const at of parsed.objects) plannerOf(at.object.kind).checkReferences?.(ctx, at, at.object);
  for (const kind of KIND_NAMES) plannerOf(kind).checkSet?.(ctx);

  // Per object: match, ownership, diff.
  const matched = new Map<KindName, Set<number | string>>(KIND_NAMES.map((k) => [k, new Set()]));
  for (const kind of KIND_NAMES) {
    const planner = plannerOf(kind);
    for (const at of declared(kind)) {
      const found = planner.match(ctx, at, at.object);
      if (!found) continue;
      if (found.target) matched.get(kind)!.add(found.target.id);
      const step = stepFor(planner, at, found, opts.source, err);
      if (step) steps.push(step);
    }
  }

  // Prune: what this source owns and no longer declares, dependents first (the registry's
  // order reversed).
  if (opts.prune)
    for (const kind of [...KIND_NAMES].reverse())
      for (const target of plannerOf(kind).prunable?.(ctx, opts.source, matched.get(kind)!) ?? [])
        steps.push({
          action: { kind, name: target.name, action: 'prune', fields: [] },
          target,
          drift: false,
          specHash: '',
        });

  return {
    source: opts.source,
    valid: errors.length === 0,
    errors,
    actions: steps.map((s) => s.action),
    steps,
  };
}

/**
 * The step of one declared object from the record it matched: refused when another source owns
 * it, created when nothing matched, re-created or refused when an immutable field changed,
 * else updated (drift put back, or adopted from the API) or unchanged.
 */
function stepFor(
  planner: KindPlanner<KindName>,
  at: Located,
  found: Match,
  source: string,
  err: PlanContext['err'],
): Step | undefined {
  const o = at.object;
  const name = o.metadata.name;
  const hash = specHash(o.spec);
  const base = { kind: o.kind, name, file: at.file };
  const { target, owner, fields, activate = false, pending = false } = found;
  if (owner && owner.source !== source) {
    err(
      at,
      'metadata.name',
      planner.ownedElsewhere?.(owner) ??
        `${o.kind} "${name}" is owned by source "${owner.source}"; remove it from one of the two sources`,
    );
    return undefined;
  }
  if (!target)
    return {
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
    };
  const immutable = fields.filter((f) => KINDS[o.kind].immutableFields.includes(f));
  if (immutable.length > 0) {
    if (o.metadata.annotations?.[RECREATE_ANNOTATION] === 'true')
      return {
        action: {
          ...base,
          action: 'update',
          fields,
          recreate: true,
          ...(found.activateOnRecreate === undefined ? {} : { activate: found.activateOnRecreate }),
          reason: `${immutable.join(', ')} changed: deleted and created again (${RECREATE_ANNOTATION})`,
        },
        object: o,
        target,
        drift: false,
        specHash: hash,
      };
    const message = `${immutable.map((f) => `spec.${f}`).join(', ')} cannot change once created; put the old value back, or declare a new ${o.kind} under another name, or set the annotation ${RECREATE_ANNOTATION}: "true" to delete and re-create it (destructive)`;
    for (const f of immutable) err(at, `spec.${f}`, message);
    return {
      action: { ...base, action: 'refused', fields: immutable, reason: message },
      object: o,
      target,
      drift: false,
      specHash: hash,
    };
  }
  const adopt = !owner && planner.adopts !== false;
  const drift = !!owner && fields.length > 0 && owner.spec_hash === hash;
  const reason = drift
    ? `changed outside source "${source}" (through the API): ${fields.join(', ')} put back to the declared values`
    : adopt
      ? `made through the API; source "${source}" takes it over`
      : undefined;
  return {
    action: {
      ...base,
      action: fields.length > 0 ? 'update' : 'unchanged',
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
  };
}
