import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { isoNow, keys } from '@vtl/api';
import {
  GITOPS_SERVICE,
  GitSourceRecord,
  PollRequest,
  SourceStatus,
  emptySourceStatus,
  mintServiceKey,
  objectStatuses,
  type PlanAction,
  type PlanError,
} from '@vtl/gitops';
import { recordPollOutcome, takePollRequest } from '@vtl/domain';
import type { EventJournal, Store, Versioned } from '@vtl/store';
import { FetchError, fetchRevision } from './git-fetch.js';
import { CredentialError, resolveCredential } from './git-credentials.js';
import { postJson } from './api-client.js';

export interface GitopsPollerOptions {
  store: Store;
  journal: EventJournal;
  logger: Logger;
  /** Where the apiserver answers, e.g. https://127.0.0.1:8443. */
  apiUrl: string;
  /** The apiserver's certificate (PEM file), pinned by the client. */
  apiCertFile: string;
  /** Local repositories, one directory per source. */
  workDir: string;
  /** How often sources are looked at (a source polls at its own interval). */
  tickMs?: number;
  /** How long one apply may take (an activation restarts the data plane). */
  applyTimeoutMs?: number;
}

interface ApplyBody {
  ok?: boolean;
  actions?: PlanAction[];
  applied?: { ok: boolean; kind: string; name: string; detail: string }[];
  error?: { code: string; message: string; details?: { errors?: PlanError[]; actions?: PlanAction[] } };
}

/**
 * The Git source (docs/gitops.md), run by the leader controller: each source is fetched at its
 * interval (or at once after its webhook), and its manifests go to POST /api/gitops/apply as the
 * service principal, so the apiserver stays the one validating writer. The outcome, the applied
 * commit and any errors are recorded at keys.gitopsSourceStatus for the API and the status view.
 * Every poll applies, even of an unchanged commit: that is what corrects drift.
 */
export async function startGitopsPoller(opts: GitopsPollerOptions): Promise<{ stop(): Promise<void> }> {
  const { store, logger } = opts;
  const { token, record } = mintServiceKey(GITOPS_SERVICE, 'admin');
  await store.put(keys.serviceKeys.one(GITOPS_SERVICE), record);
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const lastPoll = new Map<string, number>();
  const reported = new Set<string>();

  async function pollOne(listed: Versioned<GitSourceRecord>): Promise<void> {
    const source = listed.value;
    // Recorded only while this source exists: one deleted during the poll gets no status back.
    const setStatus = (patch: Partial<SourceStatus>) =>
      recordPollOutcome(store, listed, SourceStatus, (cur) => ({
        ...(cur ?? emptySourceStatus()),
        ...patch,
      }));
    const now = isoNow();
    let fetched;
    try {
      const cred = await resolveCredential(store, source);
      fetched = await fetchRevision(path.join(opts.workDir, source.name), source, cred);
    } catch (err) {
      const message =
        err instanceof FetchError || err instanceof CredentialError
          ? err.message
          : `fetch failed: ${String(err)}`;
      logger.warn({ source: source.name, msg: message }, 'gitops fetch failed');
      await setStatus({ outcome: 'fetch_failed', message, last_poll_at: now, errors: [] });
      return;
    }
    if (fetched.acceptedHostKey) {
      // Trust on first use is a decision someone should see: say which key was taken.
      const detail = `Accepted the SSH host key of ${fetched.acceptedHostKey} on first use; a different key will be refused. Give known_hosts in the credential to pin it instead.`;
      logger.info({ source: source.name, host: fetched.acceptedHostKey }, 'gitops ssh host key accepted');
      await opts.journal.emit({ kind: 'gitops_host_key_accepted', subject: source.name, detail });
    }
    const cert = await fs.readFile(opts.apiCertFile, 'utf8');
    let answer;
    try {
      answer = await postJson(
        `${opts.apiUrl}/api/gitops/apply`,
        cert,
        token,
        { source: source.name, documents: fetched.documents, prune: source.prune, revision: fetched.commit },
        opts.applyTimeoutMs ?? 600_000,
      );
    } catch (err) {
      const message = `The apiserver did not take the revision: ${err instanceof Error ? err.message : String(err)}; the next poll retries.`;
      await setStatus({
        outcome: 'failed',
        message,
        last_revision: fetched.commit,
        last_poll_at: now,
        errors: [],
      });
      return;
    }
    const body = answer.body as ApplyBody;
    const previous = (await store.get(keys.gitopsSourceStatus.one(source.name), SourceStatus))?.value.objects;
    const objects = objectStatuses(
      body.actions ?? body.error?.details?.actions ?? [],
      body.error?.details?.errors ?? [],
      body.applied,
      previous,
    );
    if (answer.status === 200 && body.ok) {
      await setStatus({
        outcome: 'applied',
        message: `Applied ${fetched.commit.slice(0, 12)}.`,
        applied_revision: fetched.commit,
        last_revision: fetched.commit,
        errors: [],
        objects,
        last_poll_at: now,
        last_applied_at: isoNow(),
      });
      return;
    }
    const errors = body.error?.details?.errors ?? [];
    const failedStep = body.applied?.find((a) => !a.ok);
    const outcome = answer.status === 400 && errors.length > 0 ? 'invalid' : 'failed';
    const message =
      outcome === 'invalid'
        ? `Revision ${fetched.commit.slice(0, 12)} is invalid and was not applied: ${errors.map((e) => `${e.file}: ${e.message}`).join('; ')}`
        : failedStep
          ? `Revision ${fetched.commit.slice(0, 12)} partly applied: ${failedStep.kind} ${failedStep.name}: ${failedStep.detail}`
          : `Revision ${fetched.commit.slice(0, 12)} was refused (${answer.status}): ${body.error?.message ?? ''}`;
    await setStatus({
      outcome,
      message,
      errors,
      objects,
      last_revision: fetched.commit,
      last_poll_at: now,
    });
    // Once per commit, not once per poll: the journal says a revision was refused, not that it still is.
    const seen = `${source.name}@${fetched.commit}`;
    if (reported.has(seen)) return;
    reported.add(seen);
    await opts.journal.emit({
      kind: outcome === 'invalid' ? 'gitops_revision_invalid' : 'gitops_apply_failed',
      subject: source.name,
      detail: message,
      data: { source: source.name, revision: fetched.commit },
    });
  }

  async function tick(): Promise<void> {
    const [sources, polls] = await Promise.all([
      store.list(keys.gitopsSources.prefix, GitSourceRecord),
      store.list(keys.gitopsPollRequests.prefix, PollRequest),
    ]);
    for (const listed of sources.items) {
      const source = listed.value;
      if (stopped) return;
      const requested = polls.items.find((p) => p.key === keys.gitopsPollRequests.one(source.name));
      const last = lastPoll.get(source.name) ?? 0;
      // A suspended source is left alone, webhook or not; its poll request waits for it.
      if (source.suspended) continue;
      const due = Date.now() - last >= source.interval_sec * 1000;
      if (!due && !requested) continue;
      lastPoll.set(source.name, Date.now());
      if (requested) await takePollRequest(store, source.name, requested.modRevision);
      await pollOne(listed).catch((err: unknown) =>
        logger.error({ err, source: source.name }, 'gitops poll failed'),
      );
    }
  }

  const timer = setInterval(() => {
    running = running.then(tick).catch((err: unknown) => logger.warn({ err }, 'gitops tick failed'));
  }, opts.tickMs ?? 1000);
  logger.info({ apiUrl: opts.apiUrl }, 'gitops poller started');
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
