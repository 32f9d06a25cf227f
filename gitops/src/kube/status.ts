import { normalizeInitiatorName } from '@vtl/api';
import { syncConditions } from '../conditions.js';
import type { AppliedAction, PlanAction, PlanError } from '../contract.js';
import type { Condition, KindName } from '../model/index.js';

// REST rows (docs/api.md) as the adapter reads them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = any;

/** What the appliance holds now, by the names the declarations use. */
export interface ApplianceView {
  pools: Row[];
  libraries: Row[];
  remotes: Row[];
  initiators: Row[];
}

/** The outcome of one sync for the whole namespace. */
export interface SyncOutcome {
  valid: boolean;
  errors: PlanError[];
  actions: PlanAction[];
  applied: AppliedAction[];
  /** Set when the apply did not run at all (the appliance unreachable, 409 another apply). */
  failure?: string;
}

/** The appliance record a declaration stands for, if it exists. */
export function recordOf(
  view: ApplianceView,
  kind: KindName,
  name: string,
  spec: Record<string, unknown>,
): Row {
  switch (kind) {
    case 'TapePool':
      return view.pools.find((p) => p.name === name);
    case 'VirtualTapeLibrary':
      return view.libraries.find((l) => l.name === name);
    case 'TapeRemote':
      return view.remotes.find((r) => r.name === name);
    case 'TapeInitiator': {
      const id = normalizeInitiatorName(String(spec.wwpn ?? ''))?.name;
      return view.initiators.find((i) => i.wwpn === id);
    }
    case 'ApplianceSettings':
      return {};
  }
}

/** The kind's observed fields (the CRD status schema) from its record. */
function observedFields(kind: KindName, record: Row): Record<string, unknown> {
  if (!record) return {};
  switch (kind) {
    case 'TapePool':
      return { id: record.id, state: record.state };
    case 'VirtualTapeLibrary':
      return { id: record.id, serial: record.serial, state: record.state };
    case 'TapeRemote':
      return { id: record.id, ...(record.last_test_at ? { lastTestOk: record.last_test_ok } : {}) };
    case 'TapeInitiator':
      return { registeredName: record.wwpn, applied: record.applied, loggedIn: record.logged_in };
    case 'ApplianceSettings':
      return {};
  }
}

/** Why a record that synced is not usable yet, if it is not (Ready False). */
function notReady(kind: KindName, record: Row): { reason: string; message: string } | undefined {
  if (!record) return { reason: 'NotCreated', message: 'The appliance has no such object yet.' };
  if (kind === 'TapePool' && record.state !== 'active')
    return {
      reason: record.state === 'offline' ? 'PoolOffline' : 'PoolError',
      message: record.detail || `The pool is ${record.state}; check the nodeagent of node ${record.node}.`,
    };
  if (kind === 'TapeInitiator' && record.applied === false)
    return { reason: 'NotApplied', message: 'The access control is not applied on every port in scope yet.' };
  return undefined;
}

const named = <T extends { kind: string; name: string }>(list: readonly T[], kind: string, name: string) =>
  list.filter((a) => a.kind === kind && a.name.split(', ').includes(name));

/**
 * The status of one live custom resource after a sync: Synced and Ready conditions (the engine's
 * syncConditions, Ready then checked against the record), the generation it reflects, and the
 * kind's observed fields.
 */
export function liveStatus(
  kind: KindName,
  name: string,
  generation: number | undefined,
  spec: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
  outcome: SyncOutcome,
  view: ApplianceView,
  now = new Date().toISOString(),
): Record<string, unknown> {
  const prior = (previous?.conditions as Condition[] | undefined) ?? [];
  const record = recordOf(view, kind, name, spec);
  const action = named(outcome.actions, kind, name)[0];
  let conditions: Condition[];
  if (outcome.failure) {
    conditions = syncConditions(undefined, [], { ok: false, detail: outcome.failure }, prior, now);
  } else if (!outcome.valid) {
    const own = named(outcome.errors, kind, name);
    const first = outcome.errors[0];
    // All or nothing: another object's error blocks this one too, and says which.
    const blocked: PlanError[] = own.length
      ? own.map((e) => ({ ...e, message: e.field ? `${e.field}: ${e.message}` : e.message }))
      : [
          {
            ...first!,
            message: `Nothing in the namespace was applied: ${first?.kind}/${first?.name} is invalid (${first?.field ? `${first.field}: ` : ''}${first?.message}).`,
          },
        ];
    conditions = syncConditions(action, blocked, undefined, prior, now);
  } else if (action?.action === 'refused') {
    const error = {
      file: '',
      document: 0,
      kind,
      name,
      field: action.fields.join(','),
      message: action.reason ?? 'refused',
    };
    conditions = syncConditions(action, [error], undefined, prior, now);
  } else {
    const results = named(outcome.applied, kind, name);
    const failed = results.find((r) => !r.ok);
    const result = failed ?? results[0];
    conditions = syncConditions(
      action,
      [],
      result ? { ok: result.ok, detail: result.detail } : undefined,
      prior,
      now,
      kind === 'VirtualTapeLibrary' && record?.state === 'pending_restart',
    );
    const ready = conditions.find((c) => c.type === 'Ready');
    const why = ready?.status === 'True' ? notReady(kind, record) : undefined;
    if (ready && why)
      Object.assign(ready, {
        status: 'False',
        ...why,
        lastTransitionTime:
          prior.find((c) => c.type === 'Ready')?.status === 'False' ? ready.lastTransitionTime : now,
      });
  }
  return {
    ...(previous ?? {}),
    ...observedFields(kind, record),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions,
  };
}

/**
 * A resource being deleted: `release` when the appliance no longer holds what it declared (or
 * this source never owned it, so nothing will be pruned); else the condition that says what
 * blocks the deletion, and the finalizer stays.
 */
export function deletionVerdict(
  kind: KindName,
  name: string,
  spec: Record<string, unknown>,
  outcome: SyncOutcome,
  view: ApplianceView,
): { release: true } | { release: false; reason: string; message: string } {
  if (kind === 'ApplianceSettings') return { release: true };
  const record = recordOf(view, kind, name, spec);
  if (!record) return { release: true };
  if (outcome.failure) return { release: false, reason: 'DeletionPending', message: outcome.failure };
  if (!outcome.valid)
    return {
      release: false,
      reason: 'DeletionBlocked',
      message: `Not deleted: the namespace's set is invalid, so nothing was applied (${outcome.errors[0]?.kind}/${outcome.errors[0]?.name}: ${outcome.errors[0]?.message}).`,
    };
  const prune = named(outcome.actions, kind, name).find(
    (a) => a.action === 'prune' || a.action === 'refused',
  );
  if (!prune) return { release: true }; // Not this source's: the appliance keeps it, the resource may go.
  if (prune.action === 'refused')
    return {
      release: false,
      reason: 'DeletionBlocked',
      message: prune.reason ?? 'The appliance refused the deletion.',
    };
  const result = named(outcome.applied, kind, name).find((r) => r.action === 'prune');
  return {
    release: false,
    reason: 'DeletionBlocked',
    message:
      result && !result.ok
        ? `The appliance refused to delete it: ${result.detail}`
        : 'Waiting for the appliance to delete it.',
  };
}
