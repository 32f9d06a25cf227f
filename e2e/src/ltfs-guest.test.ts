import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { startTestRgw, type TestRgw } from '@vtl/offsite/testing/rgw';
import { Appliance } from './harness/appliance.js';
import { ensureGuestImage, findQemu } from './guest/guest-image.js';
import { guestScript } from './guest/guest-script.js';
import { LTFS_PREFIX, findLtfsBuildScript, ltfsOverlay } from './guest/ltfs-overlay.js';
import { GUEST_PORTAL, runGuest, type GuestRun } from './guest/qemu-runner.js';

const GUEST_IQN = 'iqn.2026-11.test.guest:archive1';
/** Minted once the LTFS cartridge is back from S3: the guest polls `mtx status` for it. */
const ROUNDTRIP_SIGNAL = 'LTF008L8';
const JOB_DONE = ['succeeded', 'failed', 'cancelled', 'interrupted'];
/** LTFS builds in ~3 minutes on first use; the guest session takes a few more under emulation. */
const GUEST_TIMEOUT_MS = 15 * 60_000;

const qemu = await findQemu();
const ltfsBuild = await findLtfsBuildScript();

/**
 * An archive host: the LTFS reference implementation (LinearTapeFileSystem/ltfs 2.4.8.4) in the
 * Linux guest formats a cartridge of an LTO-8 library with mkltfs, mounts it through FUSE, copies
 * files in and out across a remount, and checks it with ltfsck. It talks to the drive through the
 * sg driver, so every command it sends (partitions, MAM, log and mode pages) is the real one.
 * Half way, the host exports the LTFS cartridge to a real S3 (Ceph RGW), evicts and imports it,
 * and LTFS mounts it again; stenc encrypts a block on the tar cartridge.
 */
describe.skipIf(!qemu || !ltfsBuild)(
  'an archive host formats, mounts and checks a cartridge with LTFS',
  () => {
    let app: Appliance;
    let libId: number;
    let guest: GuestRun;
    let wormLabel: string;
    let rgw: TestRgw;
    let roundTrip: Promise<void> | undefined;
    let roundTripError: unknown;

    /** Export, evict and import of the LTFS cartridge while the guest waits, then the signal. */
    async function s3RoundTrip(label: string, remoteId: number): Promise<void> {
      const run = async (path: string, body: object) => {
        const res = await app.api.post(path, body);
        expect(res.status, res.text).toBe(201);
        const job = await waitFor(
          async () => {
            const j = (await app.api.get(`/api/jobs/${res.body.id}`)).body;
            return JOB_DONE.includes(j.state) ? j : undefined;
          },
          { timeoutMs: 600_000, intervalMs: 500 },
        );
        expect(job.state, `${path}: ${job.error}`).toBe('succeeded');
        return job;
      };
      const state = async () => (await app.api.get(`/api/cartridges/${label}`)).body.local_state;
      try {
        const exported = await run(`/api/cartridges/${label}/export`, { remote_id: remoteId });
        await run(`/api/cartridges/${label}/evict`, { remote_id: remoteId });
        await waitFor(async () => (await state()) === 'evicted');
        await run(`/api/cartridges/${label}/import`, {
          remote_id: remoteId,
          generation: exported.generation,
        });
        await waitFor(async () => (await state()) === 'resident');
      } catch (err) {
        roundTripError = err;
      } finally {
        // Signalled even after a failure: the guest then reports what it finds instead of waiting.
        await app.api.post('/api/cartridges', { library: libId, label: ROUNDTRIP_SIGNAL });
      }
    }

    beforeAll(
      async () => {
        const [image, overlay, started, s3] = await Promise.allSettled([
          ensureGuestImage(),
          ltfsOverlay(ltfsBuild!),
          Appliance.start({ env: { VTL_ISCSI_OPEN: '0' } }),
          startTestRgw(),
        ]);
        if (started.status === 'fulfilled') app = started.value;
        if (s3.status === 'fulfilled') rgw = s3.value;
        for (const r of [image, overlay, started, s3]) if (r.status === 'rejected') throw r.reason;
        const remote = await app.api.post('/api/remotes', rgw.remoteRequest('rgw', { prefix: 'ltfs' }));
        expect(remote.status, remote.text).toBe(201);
        const pool = (await app.api.get('/api/pools')).body[0];
        const lib = await app.api.post('/api/libraries', {
          name: 'archive',
          product: '3573-TL',
          drive_product: 'ULT3580-TD8',
          num_drives: 1,
          num_slots: 4,
          num_map: 1,
          label_prefix: 'LTF',
          pool_id: pool.id,
        });
        expect(lib.status, lib.text).toBe(201);
        libId = lib.body.library;
        await app.apply();
        expect((await app.api.post('/api/targets/acls', { wwpn: GUEST_IQN, fabric: 'iscsi' })).status).toBe(
          200,
        );
        expect((await app.api.post('/api/cartridges', { library: libId, count: 2 })).status).toBe(200);
        const worm = await app.api.post('/api/cartridges', { library: libId, worm: true });
        expect(worm.status, worm.text).toBe(200);
        wormLabel = worm.body.created[0].label;
        // Slots as the library placed the cartridges (a batched mint picks its own order).
        const slots = await waitFor(async () => {
          const carts: Array<{ label: string; location: string }> = (await app.api.get('/api/cartridges'))
            .body;
          const placed = carts.filter((c) => c.location.startsWith('slot:'));
          return placed.length === 3 ? placed : undefined;
        });
        const slotOf = (c: { location: string }) => Number(c.location.slice('slot:'.length));
        const WORM_SLOT = slotOf(slots.find((c) => c.label === wormLabel)!);
        const [ltfsCart, tarCart] = slots.filter((c) => c.label !== wormLabel);
        const [LTFS_SLOT, TAR_SLOT] = [slotOf(ltfsCart!), slotOf(tarCart!)];
        const drive = await waitFor(async () => {
          const status = (await app.api.get('/api/status')).body;
          const d = status.libraries.find((l: any) => l.library.id === libId)?.drives;
          return d?.length === 1 && d[0].serial ? d[0] : undefined;
        });
        const script = guestScript(
          {
            initiatorIqn: GUEST_IQN,
            portal: GUEST_PORTAL,
            driveSerial: drive.serial,
            numDrives: 1,
            loadSlot: LTFS_SLOT,
            fromSlot: 0,
            toSlot: 0,
          },
          'ltfs-steps.sh',
          {
            LTFS: LTFS_PREFIX,
            TAR_SLOT,
            WORM_SLOT,
            ROUNDTRIP_SIGNAL,
            STENC_KEY: randomBytes(32).toString('hex'),
          },
        );
        const startedAt = Date.now();
        guest = await runGuest({
          qemu: qemu!,
          image: (image as PromiseFulfilledResult<Awaited<ReturnType<typeof ensureGuestImage>>>).value,
          extraArchives: [(overlay as PromiseFulfilledResult<Buffer>).value],
          memoryMb: 1536,
          script,
          targetPort: app.ports.iscsi,
          timeoutMs: GUEST_TIMEOUT_MS,
          onLine: (line) => {
            if (process.env.VTL_GUEST_CONSOLE) console.log(`guest| ${line}`);
            if (line.startsWith('RESULT roundtrip-ready ok')) {
              roundTrip ??= s3RoundTrip(ltfsCart!.label, remote.body.id);
            }
          },
        });
        await roundTrip;
        const seconds = Math.round((Date.now() - startedAt) / 1000);
        const detail = (step: string) => guest.results.find((r) => r.step === step)?.detail ?? '';
        console.info(
          `ltfs guest: ${guest.results.length} steps in ${seconds} s; LTFS copy-in ${detail('copy-in')}; ` +
            `copy-out ${detail('copy-out')}; tar ${detail('tar')}`,
        );
      },
      GUEST_TIMEOUT_MS + 35 * 60_000,
    );

    afterAll(async () => {
      await app?.destroy();
      await rgw?.stop();
    });

    function passed(step: string): string {
      const result =
        guest.results.find((r) => r.step === step && !r.ok) ?? guest.results.find((r) => r.step === step);
      const logs = guest.console
        .split(/\r?\n/)
        .filter((l) => l.startsWith(`LOG ${step} `))
        .join('\n');
      expect(
        result?.ok,
        `${step}: ${result ? result.detail : 'never reported'}\n${logs || guest.console.slice(-4000)}`,
      ).toBe(true);
      return result!.detail;
    }

    it('formats the cartridge with mkltfs: two partitions, as sg_modes, sg_logs and sg_read_attr show', () => {
      expect(guest.finished, guest.console.slice(-3000)).toBe(true);
      passed('devices');
      passed('load');
      expect(passed('mkltfs')).toMatch(/formatted successfully/i);
      expect(passed('partitions')).toMatch(/^additional=01 coherency-attrs=[1-9]/);
    });

    it('mounts it through FUSE, takes files, and gives them back byte-identical after a remount', () => {
      passed('mount');
      expect(passed('copy-in')).toMatch(/^kib=\d+ seconds=/);
      // The volume change reference the drive reports matches what mkltfs and the unmount kept
      // in the MAM, so neither mount checks the whole medium; every cartridge health parameter
      // of log page 17h parses.
      expect(passed('unmount')).toBe('full-check=no health-parse-errors=0');
      expect(passed('copy-out')).toMatch(/^identical files=23 /);
      expect(passed('remount')).toBe('entries=22 full-check=no health-parse-errors=0');
    });

    it('passes ltfsck: consistent, exit 1 (LTFSCK_CORRECTED, what check mode answers for every volume it checked)', () => {
      expect(passed('ltfsck')).toMatch(/Volume is consistent/);
      passed('unload');
    });

    it('mounts the cartridge again after an export, evict and import through S3, every file intact', () => {
      expect(roundTripError).toBeUndefined();
      expect(passed('roundtrip')).toBe('identical files=23');
    });

    it('encrypts a block with stenc: unreadable with the key cleared, identical with it', () => {
      expect(passed('stenc')).toMatch(
        /^keyless-read=refused with-key=identical volume=Encrypted, but unable to decrypt/,
      );
    });

    it('mints a WORM cartridge through the API that takes an append but refuses an overwrite through st', () => {
      expect(wormLabel).toBe('LTF003LY');
      expect(passed('worm')).toBe('medium=0x8c appended=yes overwrite=refused');
    });

    it('refuses a WORM mint whose label has the data media suffix', async () => {
      const refused = await app.api.post('/api/cartridges', {
        library: libId,
        label: 'LTF009L8',
        worm: true,
      });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('LY');
    });

    it('writes the same files with tar for comparison, and logs out', async () => {
      expect(passed('tar')).toMatch(/^kib=\d+ seconds=/);
      passed('logout');
      const carts = (await app.api.get('/api/cartridges')).body as {
        label: string;
        library: number;
        size_bytes: number;
      }[];
      // Both partitions' data counts in the cartridge's size.
      const sizes = carts
        .filter((c) => c.library === libId && c.label !== wormLabel && c.label !== ROUNDTRIP_SIGNAL)
        .map((c) => c.size_bytes);
      expect(sizes).toHaveLength(2);
      expect(sizes.every((s) => s > 8_000_000)).toBe(true);
    });
  },
);

if (!qemu || !ltfsBuild) {
  it.skip('an archive host with LTFS: skipped, qemu-system-x86_64 or the LTFS source (../shared/peers) is missing', () => {});
}
