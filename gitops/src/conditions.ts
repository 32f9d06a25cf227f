import type { Condition, ConditionType } from './model/index.js';
import type { PlanAction, PlanError } from './contract.js';

/**
 * The conditions of one declared object after a sync, Kubernetes style: Synced says whether the
 * appliance now matches the declaration (reason and message say why not), Ready whether the object
 * is in use (a library waiting for activation is not). lastTransitionTime moves only on a change.
 */
export function syncConditions(
  action: PlanAction | undefined,
  errors: readonly PlanError[],
  outcome: { ok: boolean; detail: string } | undefined,
  previous: readonly Condition[] = [],
  now = new Date().toISOString(),
  pendingActivation = false,
): Condition[] {
  const cond = (type: ConditionType, ok: boolean, reason: string, message: string): Condition => {
    const status = ok ? 'True' : 'False';
    const prior = previous.find((c) => c.type === type);
    return {
      type,
      status,
      reason,
      message,
      lastTransitionTime: prior && prior.status === status ? prior.lastTransitionTime : now,
    };
  };
  if (errors.length > 0) {
    const immutable = action?.action === 'refused';
    const message = errors.map((e) => e.message).join('; ');
    return [
      cond('Synced', false, immutable ? 'ImmutableFieldChanged' : 'Invalid', message),
      cond(
        'Ready',
        previous.find((c) => c.type === 'Ready')?.status === 'True',
        immutable ? 'ImmutableFieldChanged' : 'Invalid',
        message,
      ),
    ];
  }
  if (outcome && !outcome.ok)
    return [
      cond('Synced', false, 'ApplyFailed', outcome.detail),
      cond('Ready', false, 'ApplyFailed', outcome.detail),
    ];
  const synced = cond(
    'Synced',
    true,
    action?.action === 'unchanged' ? 'UpToDate' : 'Applied',
    action?.reason ?? 'The appliance matches the declaration.',
  );
  const ready = pendingActivation
    ? cond(
        'Ready',
        false,
        'PendingActivation',
        'Declared; activate it with POST /api/libraries/apply (activation: manual), which restarts the data plane.',
      )
    : cond('Ready', true, 'Ready', 'In use on the appliance.');
  return [synced, ready];
}

/**
 * Every object's conditions after one sync, from the plan's actions, its errors and what apply
 * did to each; `previous` keeps lastTransitionTime where a status did not change.
 */
export function objectStatuses(
  actions: readonly PlanAction[],
  errors: readonly PlanError[],
  applied: readonly { kind: string; name: string; ok: boolean; detail: string }[] | undefined,
  previous: readonly { kind: string; name: string; conditions: Condition[] }[] = [],
  now = new Date().toISOString(),
): { kind: string; name: string; action: PlanAction['action']; conditions: Condition[] }[] {
  return actions.map((a) => {
    const mine = errors.filter((e) => e.kind === a.kind && e.name === a.name);
    const outcome = applied?.find((x) => x.kind === a.kind && x.name === a.name);
    const prior = previous.find((p) => p.kind === a.kind && p.name === a.name)?.conditions ?? [];
    return {
      kind: a.kind,
      name: a.name,
      action: a.action,
      conditions: syncConditions(a, mine, outcome, prior, now, a.pendingActivation === true),
    };
  });
}
