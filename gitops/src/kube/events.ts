import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, KIND_NAMES, VERSION, type KindName } from '../model/index.js';
import type { SyncOutcome } from './status.js';

/** One Kubernetes Event about a custom resource: what `kubectl describe` and `kubectl events` show. */
export interface SyncEvent {
  kind: KindName;
  name: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

const isKind = (k: string): k is KindName => (KIND_NAMES as readonly string[]).includes(k);

/**
 * The events of one sync, per resource: an invalid set and a refused change (Warning), what was
 * created, updated or put back after a REST edit (drift), what was pruned, and a refused prune.
 * Pure: the recorder decides which are new.
 */
export function syncEvents(outcome: SyncOutcome): SyncEvent[] {
  const out: SyncEvent[] = [];
  if (outcome.failure) return out; // The appliance was not reached: nothing happened to any object.
  const refused = (a: SyncOutcome['actions'][number]): SyncEvent => ({
    kind: a.kind,
    name: a.name,
    type: 'Warning',
    reason: a.fields.length ? 'ImmutableFieldChanged' : 'Refused',
    message: a.reason ?? 'The appliance refused the change.',
  });
  if (!outcome.valid) {
    // A changed immutable field makes the set invalid: it is said as such, the rest as Invalid.
    const said = new Set<string>();
    for (const a of outcome.actions)
      if (a.action === 'refused') {
        out.push(refused(a));
        said.add(`${a.kind}/${a.name}`);
      }
    for (const e of outcome.errors)
      if (isKind(e.kind) && !said.has(`${e.kind}/${e.name}`))
        out.push({
          kind: e.kind,
          name: e.name,
          type: 'Warning',
          reason: 'Invalid',
          message: `${e.field ? `${e.field}: ` : ''}${e.message} Nothing in the namespace was applied.`,
        });
    return out;
  }
  for (const a of outcome.actions) {
    if (a.action === 'refused') {
      out.push(refused(a));
      continue;
    }
    if (a.action === 'unchanged' && !a.adopt) continue;
    const result = outcome.applied.find((r) => r.kind === a.kind && r.name === a.name);
    if (!result) continue;
    if (!result.ok) {
      out.push({
        kind: a.kind,
        name: a.name,
        type: 'Warning',
        reason: a.action === 'prune' ? 'DeletionBlocked' : 'ApplyFailed',
        message: result.detail,
      });
      continue;
    }
    const [reason, message] =
      a.action === 'prune'
        ? ['Pruned', `Deleted on the appliance: ${result.detail}`]
        : a.drift
          ? ['DriftCorrected', `${a.name} was ${a.reason ?? 'changed outside the source'}`]
          : a.recreate
            ? ['Recreated', `${a.reason ?? 'Re-created'}: ${result.detail}`]
            : a.action === 'create'
              ? ['Created', result.detail]
              : ['Updated', `${a.fields.join(', ') || 'adopted'}: ${result.detail}`];
    out.push({ kind: a.kind, name: a.name, type: 'Normal', reason, message });
  }
  return out;
}

/**
 * Posts core/v1 Events, once per change of what is said about a resource: the adapter resyncs
 * every minute and a refused change is refused again each time, which is one event, not one a
 * minute. An Event that cannot be written is logged and dropped (events are best effort).
 */
export class EventRecorder {
  private readonly last = new Map<string, string>();
  private readonly instance = os.hostname();

  constructor(
    private readonly core: CoreV1Api,
    private readonly namespace: string,
    private readonly log: Logger,
  ) {}

  async record(events: SyncEvent[], uids: Map<string, string>): Promise<void> {
    for (const e of events) {
      const key = `${e.kind}/${e.name}`;
      const said = `${e.type}/${e.reason}/${e.message}`;
      if (this.last.get(key) === said) continue;
      this.last.set(key, said);
      const now = new Date();
      const uid = uids.get(key);
      try {
        await this.core.createNamespacedEvent({
          namespace: this.namespace,
          body: {
            metadata: { name: `${e.name}.${randomBytes(8).toString('hex')}`, namespace: this.namespace },
            involvedObject: {
              apiVersion: `${GROUP}/${VERSION}`,
              kind: e.kind,
              name: e.name,
              namespace: this.namespace,
              ...(uid ? { uid } : {}),
            },
            type: e.type,
            reason: e.reason,
            message: e.message.slice(0, 1024),
            action: 'Sync',
            source: { component: 'vtl-gitops' },
            reportingComponent: `${GROUP}/gitops`,
            reportingInstance: this.instance,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        });
      } catch (err) {
        this.log.warn(
          { kind: e.kind, name: e.name, reason: e.reason, err: (err as Error).message },
          'event not written',
        );
      }
    }
  }
}
