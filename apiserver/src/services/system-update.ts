import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import {
  RollbackAnswer,
  UpdateAccepted,
  UpdateRecord,
  UpdateStatus,
  VtlError,
  badRequest,
  conflict,
  keys,
} from '@vtl/api';
import {
  UpdateRefusal,
  cartridgesSince,
  discard,
  launchUpdater,
  readLastGood,
  readPending,
  readUpdateRecords,
  settleAbandonedUpdate,
  updateDir,
  updaterGone,
  verifyBundleFile,
} from '@vtl/updater';
import type { AppContext } from '../context.js';
import { RELEASE } from '../version.js';
import type { UpdateConfig } from './update-config.js';
import { receiveBundle } from './update-upload.js';

/**
 * §4.3 and §2.20: signed updates through the detached updater (docs/updates.md). The apiserver
 * verifies a bundle, records the request (system/update-request, this module's one write) and
 * starts the updater, which owns every system/update/ record from then on (api/src/keys.ts).
 * `named` is told the version the update or rollback goes to as soon as it is known (the audit
 * entry's subject, also when a later step fails).
 */

/** What GET /api/system/update-status answers, once an abandoned update is settled. */
export async function updateStatus(ctx: AppContext, config: UpdateConfig): Promise<UpdateStatus> {
  await settle(ctx, config);
  const { pending, lastGood, lastResult } = await readUpdateRecords(ctx.store);
  return UpdateStatus.parse({
    version: ctx.version,
    build: RELEASE.built,
    pending: pending ?? null,
    last_good: lastGood ?? null,
    last_result: lastResult ?? null,
  });
}

/**
 * Receives a multipart bundle upload, verifies its signature and preflight, and hands it to the
 * updater; anything staged is discarded when a step refuses.
 */
export async function acceptUpdate(
  ctx: AppContext,
  config: UpdateConfig,
  upload: IncomingMessage,
  named: (version: string) => void,
): Promise<UpdateAccepted> {
  const releasesDir = requireUpdatable(config);
  await refuseWhileInFlight(ctx, config);
  const id = randomUUID();
  const dir = updateDir(ctx.config.stateDir, id);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'bundle.tar.gz');
  try {
    const { force } = await receiveBundle(upload, file);
    const verified = await verifyBundleFile({
      file,
      workDir: dir,
      trustedKeysFile: config.trustedKeysFile,
      runningVersion: ctx.version,
      force,
      releasesDir,
    });
    await fs.rm(file, { force: true });
    await fs.writeFile(path.join(dir, 'manifest.json'), verified.manifestBytes, { mode: 0o600 });
    const now = new Date();
    const { manifest } = verified;
    named(manifest.version);
    const record = UpdateRecord.parse({
      id,
      action: 'update',
      from_version: ctx.version,
      to_version: manifest.version,
      binary: path.join(releasesDir, `${manifest.version}-${id.slice(0, 8)}`),
      prev_binary: releaseRoot(),
      db_path: dbPath(ctx),
      db_snapshot: path.join(dir, 'store-snapshot.jsonl'),
      attempt_limit: config.attemptLimit,
      staged_at: now.toISOString(),
      deadline: new Date(now.getTime() + config.deadlineSec * 1000).toISOString(),
      step: 'verified; handing over to the updater',
    });
    const unit = await claimAndLaunch(ctx, record);
    return UpdateAccepted.parse({
      from: record.from_version,
      to: record.to_version,
      built: manifest.built,
      unit,
      detail: `Signature and preflight passed. The updater snapshots the store, installs ${manifest.version} beside ${record.from_version}, restarts the control plane (host I/O goes on) and rolls back by itself unless /healthz reports ${manifest.version} by ${record.deadline}. Follow GET /api/system/update-status.`,
    });
  } catch (err) {
    await discard(dir);
    if (err instanceof UpdateRefusal) throw badRequest(err.message, { reason: err.reason });
    throw err;
  }
}

/** Hands a rollback to the last-known-good release and its store snapshot to the updater. */
export async function acceptRollback(
  ctx: AppContext,
  config: UpdateConfig,
  named: (version: string) => void,
): Promise<RollbackAnswer> {
  requireUpdatable(config);
  await refuseWhileInFlight(ctx, config);
  const good = await readLastGood(ctx.store);
  if (!good)
    throw badRequest(
      'Nothing to roll back to: no update has been applied since the last rollback or install.',
      {
        reason: 'nothing_to_roll_back',
      },
    );
  for (const [what, p] of [
    ['previous release', good.prev_binary],
    ['store snapshot', good.db_snapshot],
  ] as const)
    if (!existsSync(p))
      throw badRequest(`Cannot roll back: the ${what} ${p} is gone. Reinstall with the installer instead.`, {
        reason: 'missing',
      });
  const now = new Date();
  named(good.from_version);
  const record = UpdateRecord.parse({
    ...good,
    id: randomUUID(),
    action: 'rollback',
    from_version: ctx.version,
    to_version: good.from_version,
    binary: good.prev_binary,
    prev_binary: good.binary,
    attempt_limit: config.attemptLimit,
    staged_at: now.toISOString(),
    deadline: new Date(now.getTime() + config.deadlineSec * 1000).toISOString(),
    step: 'accepted; handing over to the updater',
    attempts: 0,
    // The rollback's own updater claims it; the update's updater is long gone.
    unit: '',
    updater: null,
  });
  // Named before the restore drops their records: their images stay on the pools.
  const orphaned = await cartridgesSince(ctx.store, good.db_snapshot);
  const unit = await claimAndLaunch(ctx, record);
  return RollbackAnswer.parse({
    from: record.from_version,
    to: record.to_version,
    unit,
    detail: `Rolling back to ${record.to_version}: the store snapshot taken before the update is restored (changes since are lost), then the control plane restarts; cartridge data and host I/O are untouched.${
      orphaned.length > 0
        ? ` Cartridges created since the update lose their records; their images stay on the pools and are listed in last_result.orphan_images (docs/updates.md): ${orphaned.join(', ')}.`
        : ''
    }`,
    orphaned_cartridges: orphaned,
  });
}

function requireUpdatable(config: UpdateConfig): string {
  if (!config.releasesDir)
    throw badRequest(
      'This deployment is not updated through the API: in Kubernetes run `helm upgrade` with the new image; elsewhere run the installer (docs/updates.md).',
      { reason: 'not_supported' },
    );
  return config.releasesDir;
}

/**
 * A pending record whose updater is gone (killed, crashed, a reboot) is settled the moment it is
 * looked at, not after a timeout: last_result and an update_taken_over event say what happened.
 * The updater's settle run does it (a child awaited here): the apiserver only reads the record.
 */
async function settle(ctx: AppContext, config: UpdateConfig): Promise<void> {
  // One run at a time in this apiserver: requests that look meanwhile (a polling console) wait for it.
  const running = settling.get(ctx);
  if (running) return running;
  const run = settleOnce(ctx, config).finally(() => settling.delete(ctx));
  settling.set(ctx, run);
  return run;
}
const settling = new WeakMap<AppContext, Promise<void>>();

async function settleOnce(ctx: AppContext, config: UpdateConfig) {
  const pending = await readPending(ctx.store);
  if (!pending || !(await updaterGone(pending))) return;
  const settled = await settleAbandonedUpdate({
    env: ctx.config.childEnv,
    runningVersion: ctx.version,
    releasesDir: config.releasesDir,
  });
  if (settled) ctx.logger.warn({ settled }, 'settled an update whose updater was gone');
}

/** One update or rollback at a time (the request is also recorded only while none is in flight). */
async function refuseWhileInFlight(ctx: AppContext, config: UpdateConfig) {
  await settle(ctx, config);
  const pending = await readPending(ctx.store);
  if (pending) throw inFlight(pending);
}

const inFlight = (r: UpdateRecord) =>
  conflict(
    `An ${r.action} to ${r.to_version} is in progress (${r.step}); wait for it to finish: GET /api/system/update-status.`,
    { id: r.id },
  );

/**
 * Records the request while nothing is in flight (two requests never both win), then starts the
 * detached updater, which takes the request over as system/update/pending: the apiserver writes
 * only the request, the updater every update record (api/src/keys.ts).
 */
async function claimAndLaunch(ctx: AppContext, record: UpdateRecord): Promise<string> {
  const created = await ctx.store
    .transaction()
    .ifAbsent(keys.update.pending)
    .ifAbsent(keys.updateRequest)
    .put(keys.updateRequest, record)
    .commit();
  if (!created) {
    const other = await readPending(ctx.store);
    throw other ? inFlight(other) : new VtlError('conflict', 'Another update was just started; retry.');
  }
  return launchUpdater({ stateDir: ctx.config.stateDir, updateId: record.id, env: ctx.config.childEnv }).unit;
}

/** The release this apiserver runs from (its package root's parent). */
function releaseRoot(): string {
  return path.resolve(import.meta.dirname, '../../..');
}

/** Where the store keeps its data: the appliance's own etcd directory, else its endpoints. */
function dbPath(ctx: AppContext): string {
  const local = path.join(ctx.config.stateDir, 'etcd');
  return existsSync(local) ? local : `etcd ${ctx.config.store.endpoints.join(',')}`;
}
