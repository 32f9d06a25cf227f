import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@vtl/reconcile';
import { Cdb, IMAGE_FILES } from '@vtl/emulator';
import { LibIscsiSession } from '@vtl/emulator/testing/libiscsi';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { backupLikeData } from '@vtl/offsite/testing/cartridge-fixture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Appliance } from './harness/appliance.js';
import { LoopDevices, btrfsSkipReason, sh } from './harness/loop-devices.js';

const skip = btrfsSkipReason();
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const HOST_IQN = 'iqn.2026-12.test.host:dedup';
const BLOCK = 256 * 1024;
/**
 * The stream both cartridges get. The issue asks for 1 GiB; 64 MiB keeps this file near two
 * minutes in CI (VTL_E2E_DEDUP_MIB=1024 runs the full size: same code, same assertions).
 */
const STREAM = Number(process.env.VTL_E2E_DEDUP_MIB ?? 64) * MiB;
const SMALL = 32 * MiB;
const JOB_DONE = ['succeeded', 'failed', 'cancelled', 'interrupted'];
/** The eviction policy's period here (VTL_EVICT_POLICY_PERIOD_MS; 30 s in production). */
const EVICT_PERIOD_MS = 2_000;

/**
 * Backup data through iSCSI onto a pool on btrfs (docs/storage.md): the engine's compression
 * per cartridge, two cartridges with the same stream shared by a dedup pass that is first
 * killed half way, and every block read back byte-identical through iSCSI afterwards; a
 * cartridge loaded during a pass left alone from then on; and the eviction threshold compared
 * with the storage's own fill (exports to a real Ceph RGW).
 */
describe.skipIf(skip)(
  `compression and dedup on btrfs, through iSCSI${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let app: Appliance;
    const loops = new LoopDevices();
    let mount: string;
    let session: LibIscsiSession;
    let libId: number;
    let labels: string[];
    let rgw: TestRgw | undefined;
    const stream = backupLikeData(STREAM, 7);
    const written = new Map<string, Buffer>();

    const cartridge = async (label: string) => (await app.api.get(`/api/cartridges/${label}`)).body;
    const poolRow = async () => (await app.api.get('/api/pools')).body.find((p: any) => p.name === 'bt');
    const storage = async () => (await app.api.get('/api/storage')).body[0];

    /** Rewinds and unloads once the drive is idle (it says "writing" for a moment after the last write). */
    async function unload() {
      expect((await session.command(1, Cdb.rewind())).status).toBe(0);
      let last: any;
      await waitFor(
        async () => (last = await app.api.post(`/api/libraries/${libId}/drives/0/unload`, {})).status === 200,
        { timeoutMs: 30_000, intervalMs: 500 },
      ).catch(() => undefined);
      expect(last.status, JSON.stringify(last.body)).toBe(200);
    }

    /** Loads through the API and waits for the drive to be ready. */
    async function load(label: string) {
      const res = await app.api.post(`/api/libraries/${libId}/drives/0/load`, { label });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await waitFor(async () => (await session.command(1, Cdb.tur())).status === 0, { timeoutMs: 20_000 });
    }

    /** Writes `data` from BOT in 256 KiB blocks and a filemark, to the loaded cartridge. */
    async function writeLoaded(label: string, data: Buffer) {
      expect((await session.command(1, Cdb.rewind())).status).toBe(0);
      for (let at = 0; at < data.length; at += BLOCK) {
        const block = data.subarray(at, at + BLOCK);
        const res = await session.command(1, Cdb.write6(block.length), { dataOut: block });
        expect(res.status, `write at ${at}`).toBe(0);
      }
      expect((await session.command(1, Cdb.writeFilemarks(1))).status).toBe(0);
      written.set(label, data);
    }

    /** Reads every block of the loaded cartridge back from BOT, comparing each with what was written. */
    async function readLoaded(label: string) {
      const data = written.get(label) as Buffer;
      expect((await session.command(1, Cdb.rewind())).status).toBe(0);
      for (let at = 0; at < data.length; at += BLOCK) {
        const res = await session.command(1, Cdb.read6(BLOCK), { dataInLength: BLOCK });
        expect(res.status, `${label}: read at ${at}: ${res.sense.toString('hex')}`).toBe(0);
        expect(res.data.equals(data.subarray(at, at + BLOCK)), `${label}: block at ${at}`).toBe(true);
      }
    }

    async function writeTape(label: string, data: Buffer) {
      await load(label);
      await writeLoaded(label, data);
      await unload();
    }

    async function readTape(label: string) {
      await load(label);
      await readLoaded(label);
      await unload();
    }

    /** The duperemove of a pass over this storage, once it runs. */
    const duperemovePid = () =>
      waitFor(
        async () => {
          for (const p of await fs.readdir('/proc')) {
            const cmd = await fs.readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '');
            if (cmd.startsWith('duperemove\0') && cmd.includes(mount)) return Number(p);
          }
          return undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );

    /** Requests a pass and waits for it to end; its status. */
    async function passNow() {
      const before = (await storage()).status.dedup.last_started_at;
      expect((await app.api.put('/api/storage/dedup', { run_now: true })).status).toBe(200);
      return passAfter(before);
    }

    /** Waits for a pass started after `before` to end. */
    async function passAfter(before: string | null) {
      return waitFor(
        async () => {
          const d = (await storage()).status.dedup;
          return d.last_started_at !== before && d.state === 'idle' && d.last_result ? d : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 500 },
      ).catch(async (err) => {
        console.log(JSON.stringify((await storage()).status), app.logs.slice(-4000));
        throw err;
      });
    }

    /** A cartridge's data file on the pool's subvolume. */
    async function dataFile(label: string) {
      const pool = path.join(mount, 'pools', 'bt');
      for (const lib of await fs.readdir(pool)) {
        const file = path.join(pool, lib, label, IMAGE_FILES.data);
        if (await fs.stat(file).catch(() => undefined)) return file;
      }
      throw new Error(`no data file of ${label} under ${pool}`);
    }

    /** Where a file's extents are and which are shared: any dedup of it changes this. */
    const extents = (file: string) => sh('filefrag', ['-v', file]);

    beforeAll(async () => {
      const devs = [loops.attach(4 * GiB), loops.attach(4 * GiB)];
      mount = await fs.mkdtemp(path.join(os.tmpdir(), 'vtl-storage-'));
      loops.unmountAtRelease(mount);
      // A 1 s operator-unload quiet window (15 s in production): the unloads after each write
      // and read would otherwise wait 15 s apiece, nearly 2 of this file's minutes. Pool figures
      // at most 5 s old (a btrfs walk can put the next one a minute away).
      app = await Appliance.start({
        env: {
          VTL_STORAGE_MOUNT: mount,
          VTL_EVICT_POLICY_PERIOD_MS: String(EVICT_PERIOD_MS),
          VTL_UNLOAD_GUARD_MS: '1000',
          VTL_POOL_REFRESH_MAX_MS: '5000',
        },
      });
      // A week between scheduled passes: only the passes this test asks for run.
      const set = await app.api.post('/api/storage', {
        devices: devs,
        dedup: { interval_minutes: 10080, paused: false },
      });
      expect(set.status, JSON.stringify(set.body)).toBe(201);
      const pool = await app.api.post('/api/pools', { name: 'bt', compression: 'zstd:3' });
      expect(pool.status, JSON.stringify(pool.body)).toBe(201);
      const lib = await app.api.post('/api/libraries', {
        name: 'dedup',
        product: '3573-TL',
        drive_product: 'ULT3580-TD8',
        num_drives: 1,
        num_slots: 8,
        num_map: 1,
        label_prefix: 'DDP',
        pool_id: pool.body.id,
      });
      expect(lib.status, JSON.stringify(lib.body)).toBe(201);
      libId = lib.body.library;
      await app.apply();
      const minted = await app.api.post('/api/cartridges', { library: libId, count: 5 });
      expect(minted.status).toBe(200);
      labels = (minted.body.created as Array<{ label: string }>).map((c) => c.label);
      const portal = `127.0.0.1:${app.ports.iscsi}`;
      const [target] = await LibIscsiSession.discover(portal, HOST_IQN);
      session = await LibIscsiSession.connect(portal, target!.targetName, HOST_IQN);
      await waitFor(async () => (await session.command(0, Cdb.tur())).status === 0, { timeoutMs: 10_000 });
    }, 120_000);
    afterAll(async () => {
      try {
        await session?.close();
        await app?.stop();
        await rgw?.stop();
      } finally {
        loops.release();
        await fs.rm(mount, { recursive: true, force: true }).catch(() => undefined);
        if (app) await fs.rm(app.stateDir, { recursive: true, force: true });
      }
    });

    it('compresses text-like data at least 2x and leaves random data as it is', async () => {
      const [text, random] = labels as [string, string];
      await writeTape(text, backupLikeData(SMALL, 3, 'text'));
      await writeTape(random, backupLikeData(SMALL, 4, 'random'));
      sh('sync', []);
      const ratio = async (label: string) => {
        const c = await cartridge(label);
        return c.phys_bytes > 0 ? c.size_bytes / c.phys_bytes : 0;
      };
      // The emulator reads an idle cartridge's extents once it changed (compsize on btrfs).
      await waitFor(async () => (await ratio(text)) >= 2, { timeoutMs: 30_000, intervalMs: 500 }).catch(
        () => 0,
      );
      expect(await ratio(text)).toBeGreaterThanOrEqual(2);
      expect(Math.abs((await ratio(random)) - 1)).toBeLessThanOrEqual(0.02);
      // Gone again, so the pool's dedup figure below is that of the two equal cartridges alone.
      for (const label of [text, random]) {
        expect((await app.api.delete(`/api/cartridges/${label}`, { confirm: label })).status).toBe(200);
        await waitFor(async () => (await app.api.get(`/api/cartridges/${label}`)).status === 404, {
          timeoutMs: 30_000,
          intervalMs: 250,
        });
      }
    }, 120_000);

    it('shares the blocks of two cartridges written with the same stream, after a pass killed half way', async () => {
      const [, , first, second] = labels as [string, string, string, string];
      await writeTape(first, stream);
      await writeTape(second, stream);
      sh('sync', []);

      // A pass killed (SIGKILL) while it runs: nothing is lost, the next pass goes on.
      expect((await app.api.put('/api/storage/dedup', { run_now: true })).status).toBe(200);
      process.kill(await duperemovePid(), 'SIGKILL');
      await waitFor(async () => (await storage()).status.dedup.last_result === 'failed', {
        timeoutMs: 30_000,
        intervalMs: 250,
      });

      const done = await passNow();
      expect(done.last_result, done.last_detail).toBe('completed');
      sh('sync', []);

      let lastRow: unknown;
      const figures = await waitFor(
        async () => {
          const row = await poolRow();
          lastRow = row;
          const f = row.figures;
          // Read after the pass ended (figures are read every 5 s here): they carry the pass
          // status they were read with. Not collected_at > last_finished_at: both are whole
          // seconds, and a reading begun in the pass's last second, equal to it, is published
          // once; later readings with the same figures are not written again.
          const pass = f?.dedup;
          return pass?.last_started_at === done.last_started_at &&
            pass?.last_finished_at === done.last_finished_at
            ? f
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1_000 },
      ).catch((err: Error) => {
        // What the pool showed last, against the pass: says which side did not move.
        throw new Error(`${err.message}; pass ${JSON.stringify(done)}; pool row ${JSON.stringify(lastRow)}`);
      });
      const sizes = (await cartridge(first)).size_bytes + (await cartridge(second)).size_bytes;
      const measured = `dedup ${figures.dedup_ratio}x, allocated ${figures.phys_est_bytes} of ${sizes} bytes written`;
      console.log(`storage-dedup: ${STREAM / MiB} MiB stream twice: ${measured}`);
      // Every block shared once by the two cartridges (1.00 before any pass), and compression
      // on top: 2.03x and 0.38 measured at 64 MiB (docs/storage.md).
      expect(figures.dedup_ratio, measured).toBeGreaterThanOrEqual(1.9);
      expect(figures.phys_est_bytes, measured).toBeLessThanOrEqual(0.55 * sizes);
    }, 600_000);

    it('reads every block back byte-identical through iSCSI after the passes', async () => {
      const [, , first, second] = labels as [string, string, string, string];
      await readTape(first);
      await readTape(second);
    }, 300_000);

    it('leaves a cartridge loaded during a pass alone from then on, and out of passes while loaded', async () => {
      const late = labels[4] as string;
      // A third copy of the stream: any pass that reaches it shares its blocks with the first two.
      await writeTape(late, stream);
      const file = await dataFile(late);

      // A pass over it, frozen (SIGSTOP) so it cannot end before the load.
      const before = (await storage()).status.dedup.last_started_at;
      expect((await app.api.put('/api/storage/dedup', { run_now: true })).status).toBe(200);
      const pid = await duperemovePid();
      process.kill(pid, 'SIGSTOP');
      let atLoad: string;
      try {
        await load(late);
        atLoad = extents(file);
        // The runner ends the pass on the load: its SIGTERM waits in the frozen process, or ends
        // it at once if the runner's pacer had paused it too (it continues what it paused).
        const sigterm = 1n << 14n;
        await waitFor(
          async () => {
            const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
            const pending = /^ShdPnd:\s*([0-9a-f]+)/m.exec(status)?.[1];
            if (pending === undefined || /^State:\s*Z/m.test(status)) return true;
            return (BigInt(`0x${pending}`) & sigterm) !== 0n;
          },
          { timeoutMs: 30_000, intervalMs: 100 },
        );
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const stopped = await passAfter(before);
      expect(stopped.last_result, stopped.last_detail).toBe('interrupted');
      expect(stopped.last_detail).toContain(late);
      expect(extents(file), 'extents since the load').toBe(atLoad);
      await unload();

      // Idle again: a pass shares it. Then loaded and written afresh (its extents are its own
      // again), a pass leaves it as it is, though the hash file knows it from the pass before.
      expect((await passNow()).last_result).toBe('completed');
      expect(extents(file)).toMatch(/shared/);
      await load(late);
      await writeLoaded(late, stream);
      sh('sync', []);
      const rewritten = extents(file);
      expect(rewritten).not.toMatch(/shared/);
      const whileLoaded = await passNow();
      expect(whileLoaded.last_result, whileLoaded.last_detail).toBe('completed');
      expect(whileLoaded.last_detail).toMatch(/ of 2 cartridges/);
      expect(extents(file), 'extents after a pass while loaded').toBe(rewritten);
      await readLoaded(late);
      await unload();
    }, 600_000);

    it("evicts above the threshold of the storage's own fill, not of the host's filesystem", async () => {
      const first = labels[2] as string;
      rgw = await startTestRgw();
      const remote = await app.api.post('/api/remotes', rgw.remoteRequest('rgw', { prefix: 'dedup' }));
      expect(remote.status, remote.text).toBe(201);
      const exported = await app.api.post(`/api/cartridges/${first}/export`, { remote_id: remote.body.id });
      expect(exported.status, exported.text).toBe(201);
      const job = await waitFor(
        async () => {
          const j = (await app.api.get(`/api/jobs/${exported.body.id}`)).body;
          return JOB_DONE.includes(j.state) ? j : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 500 },
      );
      expect(job.state, job.error).toBe('succeeded');

      // Data beside the cartridges, so the storage is a few percent full (threshold_pct is whole).
      const before = (await poolRow()).figures.fs_used_bytes;
      await fs.writeFile(path.join(mount, 'pools', 'bt', 'filler.bin'), randomBytes(320 * MiB));
      sh('sync', []);
      const f = await waitFor(
        async () => {
          const figures = (await poolRow()).figures;
          return figures.fs_used_bytes >= before + 300 * MiB ? figures : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1_000 },
      );
      // The pool's fill is the storage's: its two devices and the bytes allocated on them.
      expect(f.fs_total_bytes).toBe(8 * GiB);
      expect(f.fs_used_bytes).toBe(f.zpool_alloc_bytes);
      const fill = (100 * f.fs_used_bytes) / f.fs_total_bytes;
      const host = await fs.statfs(app.stateDir);
      const hostFill = (100 * (host.blocks - host.bfree)) / host.blocks;
      const policyEvictions = async () =>
        (
          (await app.api.get('/api/jobs')).body as Array<{
            kind: string;
            requested_by: string;
            label: string;
          }>
        )
          .filter((j) => j.kind === 'evict' && j.requested_by === 'policy:evict.threshold_pct')
          .map((j) => j.label);

      // Above the storage's fill (below the host's, where that is fuller): nothing goes.
      const above = Math.ceil(fill) + 1;
      const settings = { 'export.default_remote': String(remote.body.id) };
      let res = await app.api.put('/api/settings', { ...settings, 'evict.threshold_pct': String(above) });
      expect(res.status, res.text).toBe(200);
      if (hostFill <= above)
        console.log(
          `storage-dedup: host filesystem ${hostFill.toFixed(1)}% full: it cannot tell the fills apart`,
        );
      // The policy runs on every settings change and every period (2 s here): the change's pass
      // and at least two periodic ones, chances to go wrong.
      await new Promise((r) => setTimeout(r, 2.5 * EVICT_PERIOD_MS));
      expect(await policyEvictions(), `storage ${fill.toFixed(1)}%, host ${hostFill.toFixed(1)}%`).toEqual(
        [],
      );

      // Below it: the exported cartridge is evicted by the policy.
      const below = Math.floor(fill) - 1;
      expect(below, `storage ${fill.toFixed(1)}% full`).toBeGreaterThanOrEqual(1);
      res = await app.api.put('/api/settings', { ...settings, 'evict.threshold_pct': String(below) });
      expect(res.status, res.text).toBe(200);
      await waitFor(async () => (await policyEvictions()).includes(first), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      await waitFor(async () => (await cartridge(first)).local_state === 'evicted', {
        timeoutMs: 120_000,
        intervalMs: 500,
      });
      expect(await policyEvictions()).toEqual([first]);
    }, 600_000);
  },
);
