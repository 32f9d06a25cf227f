import type { Logger } from 'pino';
import { Identity, RemoteRecord, Settings, defaultSystemName, keys } from '@vtl/api';
import type { EventJournal, Store } from '@vtl/store';
import { startController, watchInto } from '@vtl/reconcile';

/** What a job-making policy reads before a pass: the settings, and the default remote its jobs use. */
export interface PolicySettings {
  settings: Settings;
  /** export.default_remote, a remote that exists. */
  remoteId: number;
  /** The system name export jobs record (system.name, or the one derived from the identity). */
  system: string;
}

/**
 * The settings of a policy pass, or undefined when the policy has nothing to do: `enabled` says
 * no, no default remote is set, or it names no remote.
 */
export async function readPolicySettings(
  store: Store,
  enabled: (settings: Settings) => boolean,
): Promise<PolicySettings | undefined> {
  const settings = (await store.get(keys.settings, Settings))?.value ?? {};
  const remoteId = Number.parseInt(settings['export.default_remote'] ?? '', 10);
  if (!enabled(settings) || !Number.isFinite(remoteId)) return undefined;
  if (!(await store.get(keys.remotes.one(remoteId), RemoteRecord))) return undefined;
  const identity = (await store.get(keys.identity, Identity))?.value;
  const system = settings['system.name'] || (identity ? defaultSystemName(identity.system_uuid) : '');
  return { settings, remoteId, system };
}

/** What a policy loop runs on. */
export interface PolicyDeps {
  store: Store;
  journal: EventJournal;
  logger: Logger;
  /** Overrides the policy's `everyMs` (the controller's config: tests shorten a period). */
  everyMs?: number;
}

/**
 * A policy's loop: its pass runs every `everyMs` and at once when the settings change (what the
 * policies read besides the settings changes too often to watch). The pass returns the jobs it
 * made; a pass that made some logs `made` with their ids. Returns the loop's start.
 */
export function policyLoop(policy: {
  name: string;
  everyMs: number;
  pass: (store: Store, journal: EventJournal) => Promise<number[]>;
  made: string;
}): (deps: PolicyDeps) => Promise<{ stop(): Promise<void> }> {
  return async ({ store, journal, logger, everyMs = policy.everyMs }) => {
    const controller = startController<string>({
      name: policy.name,
      logger,
      reconcile: async (_key, { log }) => {
        const jobs = await policy.pass(store, journal);
        if (jobs.length > 0) log.info({ jobs }, policy.made);
        return { requeueAfterMs: everyMs };
      },
    });
    const watch = await watchInto(store, keys.settings, Settings, controller.queue, () => policy.name);
    controller.queue.add(policy.name);
    return {
      stop: async () => {
        await watch.close();
        await controller.stop();
      },
    };
  };
}
