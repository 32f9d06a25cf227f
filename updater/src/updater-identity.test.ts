import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { UpdateRecord } from '@vtl/api';
import { HEARTBEAT_STALE_MS, START_GRACE_MS, selfIdentity, updaterGone } from './updater-identity.js';

const record = (over: Partial<UpdateRecord> = {}): UpdateRecord =>
  UpdateRecord.parse({
    id: 'u1',
    from_version: 'v0.1.0',
    to_version: 'v0.2.0',
    binary: '/r/v0.2.0-u1',
    prev_binary: '/r/factory',
    db_path: '/s/etcd',
    db_snapshot: '/s/updates/u1/store-snapshot.jsonl',
    attempt_limit: 3,
    staged_at: new Date().toISOString(),
    deadline: new Date(Date.now() + 300_000).toISOString(),
    ...over,
  });

describe('updaterGone: whether the process owning a pending update still runs', () => {
  it('a live updater (this process) is not gone', async () => {
    expect(await updaterGone(record({ updater: await selfIdentity() }))).toBeUndefined();
  });

  it('a killed updater is gone at once', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const identity = { ...(await selfIdentity()), pid: child.pid! };
    // Its own start time, read as the updater reads its own.
    const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8');
    identity.start_ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    expect(await updaterGone(record({ updater: identity }))).toBeUndefined();
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await updaterGone(record({ updater: identity }))).toMatch(/no longer running/);
  });

  it('a reused pid (another start time) and another boot are gone', async () => {
    const me = await selfIdentity();
    expect(await updaterGone(record({ updater: { ...me, start_ticks: '1' } }))).toMatch(/no longer running/);
    expect(await updaterGone(record({ updater: { ...me, boot_id: 'another-boot' } }))).toMatch(
      /host restarted/,
    );
  });

  it('a silent updater is gone after the stale limit; a record never claimed after the grace', async () => {
    const me = await selfIdentity();
    const old = new Date(Date.now() - HEARTBEAT_STALE_MS - 1_000).toISOString();
    expect(await updaterGone(record({ updater: { ...me, heartbeat_at: old } }))).toMatch(/hung/);
    expect(await updaterGone(record())).toBeUndefined();
    const staged = new Date(Date.now() - START_GRACE_MS - 1_000).toISOString();
    expect(await updaterGone(record({ staged_at: staged }))).toMatch(/no updater took/);
  });
});
