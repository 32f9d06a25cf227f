import { isDeepStrictEqual } from 'node:util';
import { createHash } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ApplyResponse } from '../contract.js';
import { GROUP, KINDS, VERSION, type Condition, type KindName } from '../model/index.js';
import { ApplianceError, type ApplianceClient } from './appliance-client.js';
import type { KubeAdapterConfig } from './config.js';
import { EventRecorder, syncEvents } from './events.js';
import { desiredDocuments, FINALIZER, isDeleting, referencedSecrets } from './desired.js';
import { KindInformers, type CustomResource } from './informers.js';
import { deletionVerdict, liveStatus, type ApplianceView, type SyncOutcome } from './status.js';

/** A Kubernetes API answer's status code (client-node's ApiException), if any. */
const codeOf = (err: unknown) => (err as { code?: number })?.code;

/** Activation (restarting the data plane) happens inside an apply: give it the time it takes. */
const APPLY_TIMEOUT_MS = 10 * 60_000;

/**
 * The Kubernetes source, thin over the sync engine: the custom resources of one namespace are
 * the desired set of source `kubernetes-<namespace>` (contract.ts kubernetesSourceName), applied (all or nothing, with prune)
 * through POST /api/gitops/apply after every change; each resource's status says what came of
 * it, Kubernetes Events say what each sync did to it (events.ts), and a finalizer keeps a deleted
 * resource until the appliance has let its object go.
 */
export class KubeAdapter {
  private readonly informers: KindInformers;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly events: EventRecorder;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Hash of each Secret as last registered with the appliance, so unchanged ones are not re-sent. */
  private readonly pushedSecrets = new Map<string, string>();
  /** The last sync reached the appliance (readiness). */
  lastSyncOk = false;
  /** Completed syncs (tests wait on it). */
  syncs = 0;

  constructor(
    private readonly config: KubeAdapterConfig,
    kc: KubeConfig,
    private readonly appliance: ApplianceClient,
    private readonly log: Logger,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
    this.events = new EventRecorder(this.core, config.namespace, log);
    this.informers = new KindInformers(kc, config.namespace, () => this.schedule(), log);
  }

  async start(): Promise<void> {
    await this.informers.start();
    this.resync = setInterval(() => this.schedule(0), this.config.resyncMs);
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.resync);
    await this.informers.stop();
    await this.running;
  }

  get ready(): boolean {
    return this.informers.synced && this.lastSyncOk;
  }

  /** A sync after `delayMs` of quiet (a burst of changes is one apply); never two at once. */
  schedule(delayMs = this.config.debounceMs): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.sync()
        .catch((err) =>
          this.log.error(
            { err: (err as Error).message },
            'sync failed; retrying at the next change or resync',
          ),
        )
        .finally(() => {
          this.running = undefined;
          this.syncs += 1;
          if (this.again) {
            this.again = false;
            this.schedule();
          }
        });
    }, delayMs);
  }

  private resources(): [KindName, CustomResource][] {
    return Object.values(KINDS).flatMap(({ kind }) =>
      this.informers.list(kind).map((cr) => [kind, cr] as [KindName, CustomResource]),
    );
  }

  /** One pass: finalizers, Secrets, apply, then every resource's status. */
  private async sync(): Promise<void> {
    // Before every kind is listed the set is partial, and a prune would delete the rest.
    if (!this.informers.synced) return;
    const resources = this.resources();
    for (const [kind, cr] of resources)
      if (!isDeleting(cr) && !cr.metadata.finalizers?.includes(FINALIZER))
        await this.replace(kind, {
          ...cr,
          metadata: { ...cr.metadata, finalizers: [...(cr.metadata.finalizers ?? []), FINALIZER] },
        });

    await this.pushSecrets(resources);
    const outcome = await this.apply(resources);
    const uids = new Map<string, string>();
    for (const [kind, cr] of resources)
      if (cr.metadata.uid) uids.set(`${kind}/${cr.metadata.name}`, cr.metadata.uid);
    await this.events.record(syncEvents(outcome), uids);
    const view = await this.view();
    for (const [kind, cr] of resources) {
      const spec = (cr.spec ?? {}) as Record<string, unknown>;
      if (!isDeleting(cr)) {
        const status = liveStatus(
          kind,
          cr.metadata.name,
          cr.metadata.generation,
          spec,
          cr.status,
          outcome,
          view,
        );
        await this.writeStatus(kind, cr, status);
        continue;
      }
      const verdict = deletionVerdict(kind, cr.metadata.name, spec, outcome, view);
      if (verdict.release) {
        this.log.info({ kind, name: cr.metadata.name }, 'deleted on the appliance; releasing the finalizer');
        await this.replace(kind, {
          ...cr,
          metadata: {
            ...cr.metadata,
            finalizers: (cr.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
          },
        });
        continue;
      }
      const prior = (cr.status?.conditions as Condition[] | undefined) ?? [];
      const was = prior.find((c) => c.type === 'Ready');
      const ready: Condition = {
        type: 'Ready',
        status: 'False',
        reason: verdict.reason,
        message: verdict.message,
        lastTransitionTime: was?.status === 'False' ? was.lastTransitionTime : new Date().toISOString(),
      };
      this.log.warn(
        { kind, name: cr.metadata.name, reason: verdict.message },
        'deletion blocked; keeping the finalizer',
      );
      await this.writeStatus(kind, cr, {
        ...(cr.status ?? {}),
        conditions: [...prior.filter((c) => c.type !== 'Ready'), ready],
      });
    }
  }

  /** Registers each referenced Secret's data with the appliance (PUT /api/gitops/secrets/{name}). */
  private async pushSecrets(resources: [KindName, CustomResource][]): Promise<void> {
    for (const [name, owners] of referencedSecrets(resources)) {
      let data: Record<string, string>;
      try {
        const secret = await this.core.readNamespacedSecret({ name, namespace: this.config.namespace });
        data = Object.fromEntries(
          Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
        );
      } catch (err) {
        // The apply then reports the reference as dangling on each resource that makes it.
        this.log.warn({ secret: name, owners, code: codeOf(err) }, 'referenced Secret cannot be read');
        continue;
      }
      const hash = createHash('sha256')
        .update(JSON.stringify(Object.entries(data).sort()))
        .digest('hex');
      if (this.pushedSecrets.get(name) === hash || Object.keys(data).length === 0) continue;
      await this.appliance.request('PUT', `/api/gitops/secrets/${encodeURIComponent(name)}`, { data });
      this.pushedSecrets.set(name, hash);
      this.log.info({ secret: name, keys: Object.keys(data) }, 'registered Secret with the appliance');
    }
  }

  private async apply(resources: [KindName, CustomResource][]): Promise<SyncOutcome> {
    const documents = desiredDocuments(resources);
    try {
      const res = (await this.appliance.request(
        'POST',
        '/api/gitops/apply',
        { source: this.config.source, documents, prune: true },
        APPLY_TIMEOUT_MS,
      )) as ApplyResponse;
      this.lastSyncOk = true;
      this.log.info(
        {
          source: this.config.source,
          revision: res.revision,
          ok: res.ok,
          changed: res.actions.filter((a) => a.action !== 'unchanged').length,
        },
        'applied',
      );
      return { valid: res.valid, errors: res.errors, actions: res.actions, applied: res.applied };
    } catch (err) {
      const details =
        err instanceof ApplianceError ? (err.details as Partial<SyncOutcome> | undefined) : undefined;
      if (err instanceof ApplianceError && err.status === 400 && Array.isArray(details?.errors)) {
        this.lastSyncOk = true;
        this.log.warn(
          { source: this.config.source, errors: details.errors.length },
          'declared set is invalid; nothing applied',
        );
        return { valid: false, errors: details.errors, actions: details.actions ?? [], applied: [] };
      }
      this.lastSyncOk = false;
      const message = `The appliance did not apply the set: ${(err as Error).message}`;
      this.log.warn({ source: this.config.source, err: (err as Error).message }, 'apply failed; retrying');
      this.schedule(Math.max(this.config.debounceMs, 5_000));
      return { valid: true, errors: [], actions: [], applied: [], failure: message };
    }
  }

  private async view(): Promise<ApplianceView> {
    const [pools, libraries, remotes, targets] = await Promise.all([
      this.appliance.request('GET', '/api/pools'),
      this.appliance.request('GET', '/api/libraries'),
      this.appliance.request('GET', '/api/remotes'),
      this.appliance.request('GET', '/api/targets'),
    ]);
    return { pools, libraries, remotes, initiators: targets.initiators ?? [] };
  }

  private target(kind: KindName, cr: CustomResource) {
    return {
      group: GROUP,
      version: VERSION,
      namespace: this.config.namespace,
      plural: KINDS[kind].plural,
      name: cr.metadata.name,
    };
  }

  /** Updates metadata (finalizers) of the main resource; a conflict means a newer copy is coming. */
  private async replace(kind: KindName, body: CustomResource): Promise<void> {
    try {
      await this.custom.replaceNamespacedCustomObject({ ...this.target(kind, body), body });
    } catch (err) {
      if (codeOf(err) === 409 || codeOf(err) === 404) return this.schedule();
      throw err;
    }
  }

  /** Writes status through the status subresource, only when it changed (compare and swap). */
  private async writeStatus(
    kind: KindName,
    cr: CustomResource,
    status: Record<string, unknown>,
  ): Promise<void> {
    if (isDeepStrictEqual(status, cr.status)) return;
    try {
      await this.custom.replaceNamespacedCustomObjectStatus({
        ...this.target(kind, cr),
        body: { ...cr, status },
      });
    } catch (err) {
      if (codeOf(err) === 409 || codeOf(err) === 404) return this.schedule();
      throw err;
    }
  }
}
