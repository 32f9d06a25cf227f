import fs from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import type { UpdateRecord } from '@vtl/api';
import { EventJournal, Store } from '@vtl/store';
import { activeRelease, switchRelease } from './releases.js';
import { UPDATE_TAKEN_OVER, lastResult } from './update-records.js';
import { audit, findInFlight, settleInFlight } from './update-writes.js';
import { loadSettleConfig } from './updater-config.js';
import { bootId, updaterGone } from './updater-identity.js';

/** What settling an abandoned pending record did. */
export interface Settled {
  ok: boolean;
  detail: string;
}

const realpath = (p: string) => fs.realpath(p).catch(() => path.resolve(p));

/**
 * The updater's settle run, `node updater/dist/main.js settle --running-version <v>
 * [--releases-dir <dir>]`: the apiserver starts it and waits for it the moment it sees a pending
 * record whose updater is gone, so every write of system/update/ and of the release directories
 * stays in the updater's code and processes (api/src/keys.ts). Logs go to stderr; stdout gets one
 * JSON line, the Settled or null (nothing pending, its updater lives, or another run settled it).
 */
export async function settleCommand(args: string[]) {
  const config = loadSettleConfig(args);
  const logger = pino({ name: 'updater-settle' }, pino.destination(2));
  const store = await Store.connect({ ...config.store, logger });
  try {
    const settled = await settleAbandoned({
      store,
      journal: new EventJournal(store),
      releasesDir: config.releasesDir,
      runningVersion: config.runningVersion,
    });
    if (settled) logger.warn({ settled }, 'settled an update whose updater was gone');
    process.stdout.write(`${JSON.stringify(settled ?? null)}\n`);
  } finally {
    await store.close();
  }
}

/**
 * Settles a pending update or rollback whose detached updater is gone (killed, crashed, or the
 * host rebooted), in the settle run the apiserver starts, by the rule in docs/updates.md:
 *
 * - The target release runs (the apiserver reports its version from `current` = `binary`): the
 *   work is done (a rollback restores the snapshot before it switches), so the record is
 *   completed as the updater would have: an update becomes last_good, a rollback clears it.
 * - Otherwise the previous state is put back: `current` points at the release that was running
 *   before, a half-installed release directory is removed, and the result says what to do (an
 *   update: upload again; a rollback, whose snapshot restore may be partial: roll back again,
 *   last_good is kept for it).
 *
 * The record is removed in one transaction comparing its revision (two settle runs never both
 * settle it) before any file changes. Returns undefined when nothing was pending or its updater lives.
 */
export async function settleAbandoned(opts: {
  store: Store;
  journal: EventJournal;
  releasesDir: string | undefined;
  runningVersion: string;
}): Promise<Settled | undefined> {
  const { store } = opts;
  // The updater's record, else a request no updater took over (this one is then past its grace).
  const found = await findInFlight(store);
  if (!found) return undefined;
  const r = found.record;
  const why = await updaterGone(r);
  if (!why) return undefined;
  const current = opts.releasesDir ? await activeRelease(opts.releasesDir).catch(() => '') : '';
  const targetRuns =
    opts.runningVersion === r.to_version && current !== '' && current === (await realpath(r.binary));
  const detail = describe(r, why, targetRuns);
  const settled = await settleInFlight(store, found, {
    lastResult: lastResult(targetRuns, r, targetRuns ? r.to_version : r.from_version, detail),
    // The target runs: an update is the new last good, a rollback leaves none to go back to.
    ...(targetRuns ? { lastGood: r.action === 'update' ? { ...r, step: 'healthy' } : null } : {}),
  });
  if (!settled) return undefined; // another settle run settled it, or the updater wrote
  await stopLeftovers(r);
  if (!targetRuns && opts.releasesDir) await putBack(opts.releasesDir, r, current);
  await opts.journal
    .emit({
      kind: UPDATE_TAKEN_OVER,
      subject: `${r.action}:${r.to_version}`,
      detail,
      data: { ok: targetRuns, id: r.id, step: r.step, reason: why },
    })
    .catch(() => undefined);
  await audit(
    store,
    `system.${r.action}.${targetRuns ? 'completed' : 'abandoned'}`,
    r.to_version,
    targetRuns,
    'updater',
  ).catch(() => undefined);
  return { ok: targetRuns, detail };
}

/**
 * The updater ran in its own session (setsid), so its process group is its pid: a helper it had
 * started (the tar unpacking a release) outlives it and would write on into what is put back.
 */
async function stopLeftovers(r: UpdateRecord) {
  // After a reboot the pid names nothing of the updater's.
  if (!r.updater || r.updater.boot_id !== (await bootId())) return;
  try {
    process.kill(-r.updater.pid, 'SIGKILL');
  } catch {
    // no such group: nothing left over
  }
}

/** `current` back to the release that ran before; an update's new release directory removed. */
async function putBack(releasesDir: string, r: UpdateRecord, current: string) {
  // An update switches to `binary`; a rollback to `binary` too (the release it goes back to).
  const before = r.prev_binary;
  if (current !== (await realpath(before))) await switchRelease(releasesDir, before);
  if (r.action === 'update') {
    await fs.rm(r.binary, { recursive: true, force: true });
    await fs.rm(path.join(releasesDir, `.staging-${r.id}`), { recursive: true, force: true });
    // The update's own files (manifest, snapshot): nothing can roll back to an update never applied.
    const files = path.dirname(r.db_snapshot);
    if (path.basename(files) === r.id) await fs.rm(files, { recursive: true, force: true });
  }
}

function describe(r: UpdateRecord, why: string, targetRuns: boolean): string {
  const at = `at step "${r.step}"`;
  if (targetRuns)
    return r.action === 'update'
      ? `The updater stopped (${why}) ${at}, after ${r.to_version} was running: the update is kept and ${r.to_version} is the last good release.`
      : `The rollback's updater stopped (${why}) ${at}, after ${r.to_version} was running on the restored store snapshot: the rollback is complete.`;
  return r.action === 'update'
    ? `The updater stopped (${why}) ${at}: ${r.to_version} was not applied and ${r.from_version} runs on; its release directory and files were removed. Upload the bundle again.`
    : `The rollback's updater stopped (${why}) ${at}: ${r.from_version} runs on, but the store snapshot may be partly restored. Send POST /api/system/rollback again to finish it (the last good record is kept).`;
}
