import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@vtl/reconcile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';
import { LoopDevices, btrfsSkipReason, sh } from './harness/loop-devices.js';

const skip = btrfsSkipReason();
const GiB = 1024 ** 3;

/**
 * Shared storage on real btrfs over loop devices (docs/storage.md): the refusals, setup with
 * mirrored metadata, a pool as a compressed subvolume with figures from the engine, a
 * nodeagent killed and the storage unmounted behind its back (it mounts it again, makes
 * nothing), growth by a third device, and teardown once the pool is gone.
 */
describe.skipIf(skip)(`shared storage on btrfs${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let app: Appliance;
  const loops = new LoopDevices();
  let mount: string;
  let devs: string[];
  let small: string;

  const events = async (kind: string) =>
    (await app.api.get(`/api/events/search?kind=${kind}`)).body as Array<{ subject: string; detail: string }>;
  const storage = async () => (await app.api.get('/api/storage')).body[0];

  beforeAll(async () => {
    devs = [loops.attach(3 * GiB), loops.attach(3 * GiB), loops.attach(2 * GiB)];
    small = loops.attach(256 * 1024 ** 2);
    mount = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-storage-'));
    loops.unmountAtRelease(mount);
    // Figures at most 5 s old (a btrfs walk here can put the next one a minute away).
    app = await Appliance.start({ env: { VTL_STORAGE_MOUNT: mount, VTL_POOL_REFRESH_MAX_MS: '5000' } });
  }, 60_000);
  afterAll(async () => {
    try {
      await app?.stop();
    } finally {
      loops.release();
      await fs.rm(mount, { recursive: true, force: true }).catch(() => undefined);
      if (app) await fs.rm(app.stateDir, { recursive: true, force: true });
    }
  });

  it('refuses missing, too small, mounted and formatted devices, and changes nothing', async () => {
    const ext4 = devs[2] as string;
    sh('mkfs.ext4', ['-q', '-F', ext4]);
    const elsewhere = path.join(loops.dir, 'mnt');
    await fs.mkdir(elsewhere);
    sh('mount', [ext4, elsewhere]);
    loops.unmountAtRelease(elsewhere);
    const cases: Array<[string, unknown, number, RegExp]> = [
      ['missing', { devices: ['/dev/vtl-no-such-disk'] }, 400, /does not exist/],
      ['too small', { devices: [small] }, 400, /at least 1073741824/],
      ['mounted', { devices: [devs[0], ext4] }, 400, /is mounted/],
      ['not under /dev', { devices: ['/tmp/x'] }, 400, /under \/dev/],
      ['twice', { devices: [devs[0], devs[0]] }, 400, /each device once/],
    ];
    for (const [why, body, status, message] of cases) {
      const res = await app.api.post('/api/storage', body);
      expect(res.status, why).toBe(status);
      expect(res.body.error.message, why).toMatch(message);
    }
    sh('umount', [elsewhere]);
    const formatted = await app.api.post('/api/storage', { devices: [ext4] });
    expect(formatted.status).toBe(400);
    expect(formatted.body.error.message).toMatch(/already holds a ext4 filesystem.*force/);
    expect((await app.api.get('/api/storage')).body).toEqual([]);
    expect(sh('blkid', ['-p', '-o', 'value', '-s', 'TYPE', ext4]).trim()).toBe('ext4');
    expect(await events('storage_setup')).toEqual([]);
  });

  it('makes btrfs over two devices, metadata mirrored, and mounts it', async () => {
    const res = await app.api.post('/api/storage', { devices: [devs[0], devs[1]] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toMatchObject({
      state: 'ready',
      mountpoint: mount,
      metadata_profile: 'raid1',
    });
    expect(res.body.status.devices).toHaveLength(2);
    expect(res.body.status.size_bytes).toBe(6 * GiB);
    expect(sh('findmnt', ['-n', '-o', 'FSTYPE', mount]).trim()).toBe('btrfs');
    expect((await events('storage_setup')).map((e) => e.subject)).toEqual(['node1']);
    // The same request again is answered, not repeated.
    const again = await app.api.post('/api/storage', { devices: [devs[0], devs[1]] });
    expect(again.status).toBe(200);
    expect((await app.api.post('/api/storage', { devices: [devs[0]] })).status).toBe(409);
  });

  it('makes a pool a compressed subvolume whose figures come from btrfs', async () => {
    const bad = await app.api.post('/api/pools', { name: 'bt', compression: 'lz4' });
    expect(bad.status).toBe(400);
    const mixed = await app.api.post('/api/pools', { name: 'bt', path: '/tmp/x', compression: 'zstd' });
    expect(mixed.status).toBe(400);
    const res = await app.api.post('/api/pools', { name: 'bt', compression: 'zstd:3' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      state: 'active',
      engine: 'btrfs',
      path: path.join(mount, 'pools', 'bt'),
    });
    expect(sh('btrfs', ['property', 'get', res.body.path, 'compression']).trim()).toBe('compression=zstd:3');
    expect(sh('btrfs', ['subvolume', 'show', res.body.path])).toMatch(/Name:\s+bt/);

    // Text-like and random data straight into the subvolume: the engine's ratio, not a guess.
    const line = 'backup record 0000 of the nightly job: /home/user/docs/report.txt ok\n';
    await fs.writeFile(path.join(res.body.path, 'text.bin'), line.repeat((32 * 1024 ** 2) / line.length));
    await fs.writeFile(path.join(res.body.path, 'random.bin'), crypto.randomBytes(8 * 1024 ** 2));
    sh('sync', []);
    const figures = await waitFor(
      async () => {
        const pool = (await app.api.get('/api/pools')).body.find((p: any) => p.name === 'bt');
        return pool.figures?.logical_bytes >= 40 * 1024 ** 2 ? pool.figures : undefined;
      },
      // Figures refresh every 5 s here (VTL_POOL_REFRESH_MAX_MS; up to a minute in production).
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(figures.engine).toBe('btrfs');
    expect(figures.compress_ratio).toBeGreaterThan(3);
    expect(figures.phys_est_bytes).toBeLessThan(20 * 1024 ** 2);
    expect(figures.zpool_size_bytes).toBe(6 * GiB);
    const plain = (await app.api.get('/api/pools')).body.find((p: any) => p.name === 'default');
    expect(plain.figures.engine).toBe('directory');
  }, 120_000);

  it('mounts the storage again after a nodeagent crash and an unmount, and makes nothing', async () => {
    await app.restartProcess('nodeagent/dist/main.js', 'SIGKILL');
    sh('umount', [mount]);
    await waitFor(async () => sh('findmnt', ['-n', '-o', 'FSTYPE', mount]).trim() === 'btrfs', {
      timeoutMs: 60_000,
      intervalMs: 500,
    }).catch(() => undefined);
    expect(sh('findmnt', ['-n', '-o', 'FSTYPE', mount]).trim()).toBe('btrfs');
    expect(await fs.readFile(path.join(mount, 'pools', 'bt', 'random.bin')).then((b) => b.length)).toBe(
      8 * 1024 ** 2,
    );
    expect(await events('storage_setup')).toHaveLength(1);
  }, 90_000);

  it('grows by a third device, which must be forced over its old filesystem', async () => {
    const refused = await app.api.post('/api/storage/devices', { device: devs[2] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/ext4/);
    const res = await app.api.post('/api/storage/devices', { device: devs[2], force: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status.devices).toHaveLength(3);
    expect(res.body.status.size_bytes).toBe(8 * GiB);
    const grown = await events('storage_grown');
    expect(grown).toHaveLength(1);
    expect(grown[0]?.detail).toContain(devs[2]);
  });

  it('tears down only once no pool is on it, then wipes the devices', async () => {
    const blocked = await app.api.delete('/api/storage');
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.message).toMatch(/"bt"/);
    const pool = (await app.api.get('/api/pools')).body.find((p: any) => p.name === 'bt');
    expect((await app.api.delete(`/api/pools/${pool.id}`)).status).toBe(200);
    await waitFor(async () => !(await fs.stat(pool.path).catch(() => undefined)), {
      timeoutMs: 20_000,
      intervalMs: 250,
    });
    const res = await app.api.delete('/api/storage');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await app.api.get('/api/storage')).body).toEqual([]);
    expect(await storage()).toBeUndefined();
    expect(() => sh('findmnt', ['-n', mount])).toThrow();
    expect((await events('storage_torndown')).map((e) => e.subject)).toEqual(['node1']);
    for (const d of devs) expect(() => sh('blkid', ['-p', d])).toThrow();
    // A device freed by the teardown is taken again without force.
    const again = await app.api.post('/api/storage', { devices: [devs[0]] });
    expect(again.status).toBe(201);
    expect(again.body.status.metadata_profile).toBe('dup');
  }, 60_000);
});
