import type { FastifyInstance } from 'fastify';
import { VtlError, badRequest, type ManagedBy } from '@vtl/api';
import {
  initiatorCreateBody,
  initiatorName,
  initiatorUpdateBody,
  libraryBody,
  plan,
  poolBody,
  remoteBody,
  settingField,
  settingsBody,
  storedSetting,
  type AppliedAction,
  type ApplyResponse,
  type DeclaredObject,
  type ManifestFile,
  type Observed,
  type SecretKeyRef,
  type Step,
  type Target,
} from '@vtl/gitops';
import { claimInitiator, claimLibrary, claimPool, claimRemote } from '@vtl/domain';
import type { AppContext } from '../context.js';
import { loadObserved } from './gitops-observed.js';
import { withLock } from './lock.js';
import { claimSettings, releaseSettings } from './gitops-ownership.js';
import { asInternal } from './service-principals.js';

export interface ApplyInput {
  source: string;
  revision: string;
  documents: ManifestFile[];
  prune: boolean;
}

/** How long an apply waits for another apply to finish before answering 409. */
const LOCK_WAIT_MS = 3_000;

/**
 * One apply at a time across every apiserver: a lock under a lease renewed while this process
 * lives, so a crashed apiserver frees it within the lease TTL.
 */
function withApplyLock<T>(ctx: AppContext, source: string, fn: () => Promise<T>): Promise<T> {
  return withLock(ctx.store, 'gitops-apply', fn, {
    waitMs: LOCK_WAIT_MS,
    intervalMs: 100,
    renewing: true,
    holder: { source },
    busy: 'Another GitOps apply is running; retry when it has finished (a Git source retries at its next poll).',
  });
}

type Call = (
  method: 'POST' | 'PUT' | 'DELETE',
  url: string,
  body?: unknown,
) => Promise<{ status: number; body: unknown }>;

/** A REST call of this apiserver as `gitops:<source>`: the route's own validation, rules, audit and events. */
function restCaller(app: FastifyInstance, token: string): Call {
  return async (method, url, body) => {
    const res = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    const parsed: unknown = res.body ? JSON.parse(res.body) : undefined;
    if (res.statusCode >= 400) {
      const err = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new VtlError(
        'bad_request',
        `${method} ${url} answered ${res.statusCode}: ${err?.message ?? res.body}`,
      );
    }
    return { status: res.statusCode, body: parsed };
  };
}

const enc = encodeURIComponent;

/** Applies one declared set: plan again under the lock, refuse an invalid set, then each step in order. */
export async function applyDeclared(
  app: FastifyInstance,
  ctx: AppContext,
  input: ApplyInput,
): Promise<ApplyResponse> {
  return withApplyLock(ctx, input.source, async () => {
    const observed = await loadObserved(ctx.store);
    const p = plan(input.documents, observed, { source: input.source, prune: input.prune });
    const { steps, ...shown } = p;
    if (!p.valid)
      throw badRequest(
        `The declared set has ${p.errors.length} problem(s); nothing was changed. First: ${p.errors[0]?.file}: ${p.errors[0]?.message}`,
        { ...shown },
      );
    const principal = `gitops:${input.source}`;
    const applied: AppliedAction[] = [];
    await asInternal(principal, async (token) => {
      const call = restCaller(app, token);
      const run = new Runner(ctx, call, input);
      let failed = false;
      for (const step of steps) {
        if (failed) {
          applied.push({
            ...ids(step),
            action: step.action.action,
            ok: false,
            detail: 'Not attempted: an earlier step failed.',
          });
          continue;
        }
        try {
          const detail = await run.step(step);
          applied.push({ ...ids(step), action: step.action.action, ok: true, detail });
        } catch (err) {
          failed = true;
          const detail =
            err instanceof VtlError ? err.message : 'Internal error; the apiserver log has the details.';
          if (!(err instanceof VtlError))
            ctx.logger.error({ err, source: input.source }, 'gitops step failed');
          applied.push({ ...ids(step), action: step.action.action, ok: false, detail });
        }
      }
      // A source that stops declaring the settings stops managing them (they are never pruned).
      if (
        !failed &&
        observed.settingsOwner?.source === input.source &&
        !steps.some((s) => s.action.kind === 'ApplianceSettings')
      )
        await releaseSettings(ctx.store, input.source);
      const activate = steps.filter((s) => s.action.activate);
      if (!failed && activate.length > 0) {
        const names = activate.map((s) => s.action.name).join(', ');
        try {
          await call('POST', '/api/libraries/apply', { confirm: 'apply' });
          applied.push({
            kind: 'VirtualTapeLibrary',
            name: names,
            action: 'update',
            ok: true,
            detail: 'Activated (POST /api/libraries/apply).',
          });
        } catch (err) {
          const detail = `Activation refused: ${err instanceof Error ? err.message : String(err)}; the next sync tries again.`;
          applied.push({ kind: 'VirtualTapeLibrary', name: names, action: 'update', ok: false, detail });
        }
      }
    });
    const ok = applied.every((a) => a.ok);
    await ctx.journal.emit({
      kind: 'gitops_applied',
      subject: input.source,
      detail: `${ok ? 'Applied' : 'Partly applied'} ${input.revision}: ${summary(shown.actions)}`,
      data: { source: input.source, revision: input.revision, ok },
    });
    return { ...shown, revision: input.revision, applied, ok };
  });
}

const ids = (s: Step) => ({ kind: s.action.kind, name: s.action.name });

function summary(actions: { action: string }[]): string {
  const counts = new Map<string, number>();
  for (const a of actions) counts.set(a.action, (counts.get(a.action) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ') || 'nothing declared';
}

type Of<K extends DeclaredObject['kind']> = Extract<DeclaredObject, { kind: K }>;

/** Carries out steps through the REST routes, then records ownership (managed_by) through the record's owner. */
class Runner {
  constructor(
    private readonly ctx: AppContext,
    private readonly call: Call,
    private readonly input: ApplyInput,
  ) {}

  private observed?: Observed;
  /** Fresh records: ids of what earlier steps created. */
  private async fresh(): Promise<Observed> {
    return (this.observed = await loadObserved(this.ctx.store));
  }

  private managed(step: Step, name: string): ManagedBy {
    return { source: this.input.source, revision: this.input.revision, name, spec_hash: step.specHash };
  }

  private secret = (ref: SecretKeyRef) => this.observed?.secrets[ref.name]?.[ref.key] ?? '';

  async step(step: Step): Promise<string> {
    const a = step.action;
    const note = async (detail: string) => {
      if (a.action === 'unchanged' && !a.adopt) return detail;
      await this.ctx.journal.emit({
        kind: step.drift ? 'gitops_drift_corrected' : 'gitops_change',
        subject: `${a.kind}/${a.name}`,
        detail: `${detail} (source ${this.input.source}, revision ${this.input.revision})`,
        data: {
          source: this.input.source,
          revision: this.input.revision,
          action: a.action,
          fields: a.fields,
        },
      });
      return detail;
    };
    if (a.action === 'prune') return note(await this.remove(step.target as Target));
    const o = step.object as DeclaredObject;
    if (a.recreate) await this.remove(step.target as Target);
    const target = a.recreate ? undefined : step.target;
    switch (o.kind) {
      case 'TapePool':
        return note(await this.pool(step, o, target));
      case 'VirtualTapeLibrary':
        return note(await this.library(step, o, target));
      case 'TapeRemote':
        return note(await this.remote(step, o, target));
      case 'TapeInitiator':
        return note(await this.initiator(step, o, target));
      case 'ApplianceSettings':
        return note(await this.settings(step, o));
    }
  }

  private async pool(step: Step, o: Of<'TapePool'>, target: Target | undefined): Promise<string> {
    let id = target?.id as number | undefined;
    if (id === undefined) {
      const res = await this.call('POST', '/api/pools', poolBody(o));
      id = (res.body as { id: number }).id;
    }
    await claimPool(this.ctx.store, id, this.managed(step, o.metadata.name));
    return target ? (step.action.adopt ? 'Adopted.' : 'Up to date.') : `Created pool ${id}.`;
  }

  private async library(
    step: Step,
    o: Of<'VirtualTapeLibrary'>,
    target: Target | undefined,
  ): Promise<string> {
    let id = target?.id as number | undefined;
    if (id === undefined) {
      const pool = (await this.fresh()).pools.find((p) => p.name === o.spec.poolRef);
      if (!pool)
        throw badRequest(`Pool "${o.spec.poolRef}" does not exist; it should have been created first.`);
      const res = await this.call('POST', '/api/libraries', libraryBody(o, pool.id));
      id = (res.body as { library: number }).library;
    }
    await claimLibrary(this.ctx.store, id, this.managed(step, o.metadata.name));
    return target ? (step.action.adopt ? 'Adopted.' : 'Up to date.') : `Declared library ${id}.`;
  }

  private async remote(step: Step, o: Of<'TapeRemote'>, target: Target | undefined): Promise<string> {
    await this.fresh();
    const body = remoteBody(o, this.secret(o.spec.secretRef));
    let id = target?.id as number | undefined;
    let detail = 'Up to date.';
    if (id === undefined) {
      id = ((await this.call('POST', '/api/remotes', body)).body as { id: number }).id;
      detail = `Created remote ${id}.`;
    } else if (step.action.fields.length > 0) {
      // The secret is sent only when it changed, so an update never rewrites it needlessly.
      const { secret_key, ...rest } = body;
      await this.call(
        'PUT',
        `/api/remotes/${id}`,
        step.action.fields.includes('secretRef') ? body : { ...rest, secret_key: '' },
      );
      void secret_key;
      detail = `Updated ${step.action.fields.join(', ')}.`;
    }
    await claimRemote(this.ctx.store, id, this.managed(step, o.metadata.name));
    return step.action.adopt && target ? `Adopted. ${detail}` : detail;
  }

  private libraryIds(o: Of<'TapeInitiator'>, observed: Observed): number[] | undefined {
    return o.spec.libraryRefs?.map((name) => {
      const lib = observed.libraries.find((l) => l.name === name && !l.deleting);
      if (!lib) throw badRequest(`Library "${name}" does not exist; it should have been declared first.`);
      return lib.id;
    });
  }

  private async initiator(step: Step, o: Of<'TapeInitiator'>, target: Target | undefined): Promise<string> {
    const observed = await this.fresh();
    const libs = this.libraryIds(o, observed);
    let name = target?.id as string | undefined;
    let detail = 'Up to date.';
    if (name === undefined) {
      await this.call('POST', '/api/targets/acls', initiatorCreateBody(o, libs, this.secret));
      const after = await this.fresh();
      const registered = initiatorName(o.spec.wwpn)?.name;
      const created = after.initiators.find((i) => i.wwpn === registered);
      if (!created)
        throw badRequest(
          `Initiator ${o.spec.wwpn} was not found after registering it; the next sync retries.`,
        );
      name = created.wwpn;
      detail = `Registered ${name}.`;
    } else if (step.action.fields.length > 0) {
      await this.call(
        'PUT',
        `/api/targets/acls/${enc(name)}`,
        initiatorUpdateBody(o, libs, this.secret, step.action.fields),
      );
      detail = `Updated ${step.action.fields.join(', ')}.`;
    }
    await claimInitiator(this.ctx.store, name, this.managed(step, o.metadata.name));
    return step.action.adopt && target ? `Adopted. ${detail}` : detail;
  }

  private async settings(step: Step, o: Of<'ApplianceSettings'>): Promise<string> {
    const observed = await this.fresh();
    const want = settingsBody(o.spec, (n) => observed.remotes.find((r) => r.name === n)?.id);
    const changed = Object.fromEntries(
      Object.entries(want).filter(([k, v]) => storedSetting(observed.settings, k) !== v),
    );
    const managed = this.managed(step, o.metadata.name);
    const m = observed.settingsOwner;
    if (!m || m.source !== managed.source || m.name !== managed.name || m.spec_hash !== managed.spec_hash)
      await claimSettings(this.ctx.store, managed);
    if (Object.keys(changed).length === 0) return 'Up to date.';
    await this.call('PUT', '/api/settings', changed);
    return `Updated ${Object.keys(changed).map(settingField).join(', ')}.`;
  }

  /** Prune, or the delete half of a re-create: the REST delete, with its refusals. */
  private async remove(target: Target): Promise<string> {
    switch (target.kind) {
      case 'TapePool':
        await this.call('DELETE', `/api/pools/${target.id}`);
        return `Deleted pool ${target.id}.`;
      case 'VirtualTapeLibrary':
        await this.call('DELETE', `/api/libraries/${target.id}`, {
          confirm: target.name,
          acknowledge: 'I understand',
        });
        return `Deleted library ${target.id}.`;
      case 'TapeRemote':
        await this.call('DELETE', `/api/remotes/${target.id}`);
        return `Deleted remote ${target.id}.`;
      case 'TapeInitiator':
        await this.call('DELETE', `/api/targets/acls/${enc(target.id)}`);
        return `Deregistered ${target.id}.`;
      case 'ApplianceSettings':
        return 'Settings are never deleted.';
    }
  }
}
