import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry, keys, UpdateLastResult, UpdateRecord } from '@vtl/api';
import { useTestStore } from '@vtl/store/testing/use-test-store';
// The built entry, as the apiserver takes it: the settle run is updater/dist/main.js.
import { settleAbandonedUpdate } from '@vtl/updater';
import { activeRelease, switchRelease } from './releases.js';
import { START_GRACE_MS, bootId, selfIdentity } from './updater-identity.js';

/**
 * The settle run the apiserver starts for a pending update whose updater is gone: a child
 * process of the updater's, so the apiserver itself writes neither system/update/ nor the
 * release directories (api/src/keys.ts). docs/updates.md gives the rule it follows.
 */
describe('the updater settle run (main.js settle)', () => {
  const t = useTestStore();
  let tmp: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-settle-'));
    env = {
      ...process.env,
      VTL_STATE_DIR: tmp,
      VTL_ETCD_ENDPOINTS: t.etcd.endpoint,
      VTL_SEALING_KEY_FILE: t.etcd.sealingKeyFile,
    };
  });
  afterAll(async () => {
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  /** An update killed after it switched `current` to its new, half-started release. */
  async function abandonedUpdate(id: string, updater: UpdateRecord['updater']) {
    const releasesDir = path.join(tmp, 'releases');
    const factory = path.join(tmp, 'installed');
    const release = path.join(releasesDir, `v0.2.0-${id.slice(0, 8)}`);
    const files = path.join(tmp, 'updates', id);
    for (const d of [factory, release, files]) await fs.mkdir(d, { recursive: true });
    await fs.rm(path.join(releasesDir, 'factory'), { force: true });
    await fs.symlink(factory, path.join(releasesDir, 'factory'));
    await switchRelease(releasesDir, release);
    const now = Date.now();
    const record = UpdateRecord.parse({
      id,
      action: 'update',
      from_version: 'v0.1.0',
      to_version: 'v0.2.0',
      binary: release,
      prev_binary: factory,
      db_path: path.join(tmp, 'etcd'),
      db_snapshot: path.join(files, 'store-snapshot.jsonl'),
      attempt_limit: 3,
      staged_at: new Date(now - 5_000).toISOString(),
      deadline: new Date(now + 300_000).toISOString(),
      step: 'switched to the new release',
      updater,
    });
    await t.store.put(keys.update.pending, record);
    return { releasesDir, factory, release, files };
  }

  it('puts back an update whose updater died, in the child, and says so', async () => {
    const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(dead, 'exit');
    const id = '0a1b2c3d-0000-4000-8000-000000000001';
    const u = await abandonedUpdate(id, {
      pid: dead.pid!,
      boot_id: await bootId(),
      start_ticks: '1',
      heartbeat_at: new Date().toISOString(),
    });
    const settled = await settleAbandonedUpdate({
      env,
      runningVersion: 'v0.1.0',
      releasesDir: u.releasesDir,
    });
    expect(settled).toMatchObject({ ok: false });
    expect(settled!.detail).toMatch(
      new RegExp(`updater pid ${dead.pid} is no longer running.*v0\\.2\\.0 was not applied`),
    );
    expect(await t.store.get(keys.update.pending, UpdateRecord)).toBeUndefined();
    expect((await t.store.get(keys.update.lastResult, UpdateLastResult))?.value).toMatchObject({
      ok: false,
      action: 'update',
      version: 'v0.1.0',
      detail: settled!.detail,
    });
    expect(await activeRelease(u.releasesDir)).toBe(u.factory);
    for (const gone of [u.release, u.files]) await expect(fs.stat(gone)).rejects.toThrow(/ENOENT/);
    const audit = (await t.store.list(keys.audit.prefix, AuditEntry)).items;
    expect(audit.at(-1)?.value).toMatchObject({
      action: 'system.update.abandoned',
      actor: { name: 'updater' },
      outcome: 'failed',
    });
    // Nothing pending any more: a second run finds nothing to do.
    expect(await settleAbandonedUpdate({ env, runningVersion: 'v0.1.0', releasesDir: u.releasesDir })).toBe(
      undefined,
    );
  }, 60_000);

  it('leaves an update whose updater lives alone', async () => {
    const id = '0a1b2c3d-0000-4000-8000-000000000002';
    const u = await abandonedUpdate(id, await selfIdentity());
    expect(await settleAbandonedUpdate({ env, runningVersion: 'v0.1.0', releasesDir: u.releasesDir })).toBe(
      undefined,
    );
    expect((await t.store.get(keys.update.pending, UpdateRecord))?.value.id).toBe(id);
    expect(await activeRelease(u.releasesDir)).toBe(u.release);
    await t.store.delete(keys.update.pending);
  }, 60_000);

  it("removes a request no updater took over within the grace, with the update's files", async () => {
    const id = '0a1b2c3d-0000-4000-8000-000000000003';
    const u = await abandonedUpdate(id, null);
    // Still the apiserver's request: no updater ever took it (switched back to where it ran).
    const request = (await t.store.get(keys.update.pending, UpdateRecord))!.value;
    await t.store.delete(keys.update.pending);
    await switchRelease(u.releasesDir, u.factory);
    await t.store.put(keys.updateRequest, {
      ...request,
      staged_at: new Date(Date.now() - START_GRACE_MS - 1_000).toISOString(),
    });
    const settled = await settleAbandonedUpdate({
      env,
      runningVersion: 'v0.1.0',
      releasesDir: u.releasesDir,
    });
    expect(settled?.detail).toMatch(/no updater took the update over within 30 s/);
    expect(await t.store.get(keys.updateRequest, UpdateRecord)).toBeUndefined();
    expect(await t.store.get(keys.update.pending, UpdateRecord)).toBeUndefined();
    expect(await activeRelease(u.releasesDir)).toBe(u.factory);
    await expect(fs.stat(u.files)).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it('a run that cannot do its work fails with its last log lines', async () => {
    await expect(
      settleAbandonedUpdate({
        env: { ...env, VTL_ETCD_CA_FILE: '/nonexistent' },
        runningVersion: 'v0.1.0',
        releasesDir: undefined,
      }),
    ).rejects.toThrow(/settle run failed \(exit 1\).*VTL_ETCD_CA_FILE/);
  }, 60_000);
});
