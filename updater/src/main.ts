import fs from 'node:fs/promises';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { UpdateRecord, type OrphanImage } from '@vtl/api';
import { EventJournal, Store } from '@vtl/store';
import { loadUpdaterConfig, type UpdaterConfig } from './updater-config.js';
import { waitForVersion } from './health-probe.js';
import { unitName } from './launch.js';
import { HEARTBEAT_MS, selfIdentity } from './updater-identity.js';
import { findOrphanImages } from './orphan-images.js';
import { installRelease, pruneReleases, switchRelease } from './releases.js';
import { settleCommand } from './takeover.js';
import {
  SNAPSHOT_EXCLUDES,
  UPDATE_DONE,
  UPDATE_ORPHAN_IMAGES,
  lastResult,
  step,
  updateDir,
} from './update-records.js';
import {
  audit,
  endPending,
  patchPending,
  requestControlPlaneRestart,
  takeOverRequest,
  type UpdateEnd,
} from './update-writes.js';

interface Run {
  config: UpdaterConfig;
  store: Store;
  journal: EventJournal;
  logger: Logger;
  record: UpdateRecord;
}

/** The pending record is no longer this updater's: a settle run settled it (docs/updates.md). */
class TakenOver extends Error {}

const owns = (run: Run, cur: UpdateRecord | undefined): cur is UpdateRecord =>
  cur !== undefined && cur.id === run.record.id && cur.updater?.pid === process.pid;

/**
 * Writes the pending record only while it is still this updater's (compare-and-swap): once the
 * apiserver's settle run has settled it as abandoned (e.g. this process was stopped for minutes), a late
 * write must not bring it back. Throws TakenOver then.
 */
async function guardedWrite(run: Run, patch: (cur: UpdateRecord) => UpdateRecord) {
  const wrote = await patchPending(run.store, (cur) => owns(run, cur), patch);
  if (!wrote) throw new TakenOver('the pending record was settled as abandoned');
  run.record = wrote;
}

/** Ends the pending record with `end` while it is still this updater's; throws TakenOver if not. */
async function endGuarded(run: Run, end: UpdateEnd) {
  const outcome = await endPending(run.store, (cur) => owns(run, cur), end);
  if (outcome === 'not_ours') throw new TakenOver('the pending record was settled as abandoned');
  if (outcome === 'changed') throw new TakenOver('the pending record changed under the updater');
}

/**
 * The detached updater (§9 rule 3): started by the apiserver for one pending update or rollback,
 * in its own session, so the control-plane restart it causes does not stop it. Every step is
 * written to the pending record, the event journal and this process's log.
 */
async function main() {
  const config = loadUpdaterConfig();
  const logger = pino({ name: 'updater' });
  const store = await Store.connect({ ...config.store, logger });
  const journal = new EventJournal(store);
  // Its pid, boot and start time let the apiserver see at once if this process dies.
  const record = await takeOverRequest(store, config.updateId, async (request) => ({
    ...request,
    unit: unitName(request.id, process.pid),
    updater: await selfIdentity(),
  }));
  if (!record) {
    logger.error(
      { id: config.updateId },
      'no update request with this id (another updater took it, or it was settled): nothing to do',
    );
    await store.close();
    return;
  }
  const run: Run = { config, store, journal, logger: logger.child({ update: record.id }), record };
  const heartbeat = setInterval(() => {
    guardedWrite(run, (cur) => ({
      ...cur,
      updater: { ...cur.updater!, heartbeat_at: new Date().toISOString() },
    })).catch((err: Error) => run.logger.warn({ err }, 'heartbeat not written'));
  }, HEARTBEAT_MS);
  try {
    if (record.action === 'update') await applyUpdate(run);
    else await manualRollback(run);
  } catch (err) {
    if (!(err instanceof TakenOver)) throw err;
    run.logger.error({ err }, 'this update was settled as abandoned; stopping without further changes');
  } finally {
    clearInterval(heartbeat);
    await store.close();
  }
}

/** Records a step on the pending record (CAS-free: the updater is its only writer) and journals it. */
async function progress(run: Run, label: string, patch: Partial<UpdateRecord> = {}) {
  run.logger.info({ step: label }, label);
  await guardedWrite(run, (cur) => ({ ...cur, ...patch, step: label }));
  await step(run.journal, run.record, label);
}

/**
 * Up to attempt_limit restarts, each given an equal share of the time left before the deadline,
 * until /healthz reports `version`.
 */
async function restartUntilHealthy(run: Run, version: string, deadline: number): Promise<boolean> {
  const limit = Math.max(1, run.record.attempt_limit);
  for (let attempt = 1; attempt <= limit; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await progress(run, `restarting the control plane (attempt ${attempt} of ${limit})`, {
      attempts: attempt,
    });
    await requestControlPlaneRestart(run.store, `the ${run.record.action} to ${run.record.to_version}`);
    // Let the old processes see the request and exit before a probe could reach one of them.
    await new Promise((r) => setTimeout(r, 1_000));
    const until = Date.now() + Math.max(1_000, (deadline - Date.now()) / (limit - attempt + 1));
    if (await waitForVersion(run.config.probe, version, until)) return true;
  }
  return false;
}

async function applyUpdate(run: Run) {
  const { store, config } = run;
  const dir = updateDir(config.stateDir, run.record.id);
  try {
    await progress(run, 'taking a store snapshot');
    const count = await store.saveSnapshot(run.record.db_snapshot, SNAPSHOT_EXCLUDES);
    await progress(run, `store snapshot taken (${count} records)`);
    await installRelease({
      releasesDir: config.releasesDir,
      payloadFile: path.join(dir, 'payload.tar.gz'),
      manifestBytes: await fs.readFile(path.join(dir, 'manifest.json')),
      version: run.record.to_version,
      id: run.record.id,
    });
    await fs.rm(path.join(dir, 'payload.tar.gz'), { force: true });
    await progress(run, `release installed in ${run.record.binary}`);
    await switchRelease(config.releasesDir, run.record.binary);
    await progress(run, 'switched to the new release');
  } catch (err) {
    if (err instanceof TakenOver) throw err;
    run.logger.error({ err }, 'update could not be staged');
    await switchRelease(config.releasesDir, run.record.prev_binary).catch(() => undefined);
    await finish(run, false, run.record.from_version, `Update not applied: ${(err as Error).message}`);
    return;
  }
  if (await restartUntilHealthy(run, run.record.to_version, Date.parse(run.record.deadline))) {
    await endGuarded(run, {
      lastResult: lastResult(true, run.record, run.record.to_version, `Running ${run.record.to_version}.`),
      lastGood: { ...run.record, step: 'healthy' },
    });
    await done(run, true, `${run.record.to_version} is healthy`);
    await audit(store, 'system.update.applied', run.record.to_version, true, 'updater');
    const removed = await pruneReleases({
      releasesDir: config.releasesDir,
      keep: [run.record.binary, run.record.prev_binary],
      updatesDir: path.dirname(dir),
      keepUpdate: run.record.id,
    }).catch((err: Error) => (run.logger.warn({ err }, 'old releases not removed'), []));
    if (removed.length > 0) run.logger.info({ removed }, 'older releases and update files removed');
    return;
  }
  // Never healthy: back to the previous release and the snapshot, by itself.
  await progress(run, `${run.record.to_version} did not become healthy in time; rolling back`);
  await store.restoreSnapshot(run.record.db_snapshot, SNAPSHOT_EXCLUDES);
  const orphans = await reportOrphans(run);
  await switchRelease(config.releasesDir, run.record.prev_binary);
  await progress(run, 'switched back to the previous release and restored the store snapshot');
  const back = await restartUntilHealthy(
    run,
    run.record.from_version,
    Date.now() + rollbackWindow(run.record),
  );
  await finish(
    run,
    false,
    run.record.from_version,
    back
      ? `${run.record.to_version} did not report healthy before its deadline; rolled back to ${run.record.from_version}.`
      : `${run.record.to_version} did not report healthy and ${run.record.from_version} has not answered since the rollback: see logs/updater.log and the process logs.`,
    orphans,
  );
  await audit(store, 'system.update.rolled_back', run.record.to_version, back, 'updater');
}

/** A rollback gets as long as the update had. */
const rollbackWindow = (r: UpdateRecord) =>
  Math.max(30_000, Date.parse(r.deadline) - Date.parse(r.staged_at));

async function manualRollback(run: Run) {
  const { store, config } = run;
  const r = run.record;
  await progress(run, 'restoring the store snapshot taken before the update');
  const restored = await store.restoreSnapshot(r.db_snapshot, SNAPSHOT_EXCLUDES);
  await progress(
    run,
    `store snapshot restored (${restored.put} records written, ${restored.deleted} deleted)`,
  );
  const orphans = await reportOrphans(run);
  await switchRelease(config.releasesDir, r.binary);
  await progress(run, `switched to ${r.binary}`);
  const ok = await restartUntilHealthy(run, r.to_version, Date.parse(r.deadline));
  if (ok) {
    await endGuarded(run, {
      lastResult: lastResult(true, r, r.to_version, `Rolled back to ${r.to_version}.`, orphans),
      lastGood: null,
    });
    await done(run, true, `rolled back to ${r.to_version}`);
  } else
    await finish(
      run,
      false,
      r.to_version,
      `${r.to_version} did not report healthy after the rollback: see logs/updater.log.`,
      orphans,
    );
  await audit(store, 'system.rollback.applied', r.to_version, ok, 'updater');
}

/**
 * After a snapshot restore: the cartridge images on the pools whose records the restore dropped
 * (minted after the update). Their data is kept where it is; the event and last_result name them.
 */
async function reportOrphans(run: Run): Promise<OrphanImage[]> {
  const orphans = await findOrphanImages(run.store).catch((err: Error) => {
    run.logger.warn({ err }, 'pools not searched for orphaned cartridge images');
    return [];
  });
  if (orphans.length === 0) return orphans;
  run.logger.warn({ orphans }, 'cartridge images without a record after the rollback (kept on disk)');
  await run.journal
    .emit({
      kind: UPDATE_ORPHAN_IMAGES,
      subject: `${run.record.action}:${run.record.to_version}`,
      detail: `${orphans.length} cartridge image(s) created after the update have no record now and were left on disk: ${orphans.map((o) => o.label).join(', ')}; see docs/updates.md`,
      data: { id: run.record.id, orphans },
    })
    .catch(() => undefined);
  return orphans;
}

/** Ends an update that did not succeed: pending cleared, the result recorded. */
async function finish(run: Run, ok: boolean, version: string, detail: string, orphans: OrphanImage[] = []) {
  await endGuarded(run, { lastResult: lastResult(ok, run.record, version, detail, orphans) });
  await done(run, ok, detail);
}

async function done(run: Run, ok: boolean, detail: string) {
  run.logger[ok ? 'info' : 'error']({ ok }, detail);
  await run.journal
    .emit({
      kind: UPDATE_DONE,
      subject: `${run.record.action}:${run.record.to_version}`,
      detail,
      data: { ok, id: run.record.id, from: run.record.from_version, to: run.record.to_version },
    })
    .catch(() => undefined);
}

// `main.js settle ...`: settle a pending record whose updater is gone (takeover.ts); else apply one.
(process.argv[2] === 'settle' ? settleCommand(process.argv.slice(3)) : main()).catch((err) => {
  console.error(
    JSON.stringify({ level: 60, name: 'updater', msg: 'updater failed', err: String(err?.stack ?? err) }),
  );
  process.exit(1);
});
