import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import type { Appliance } from './harness/appliance.js';
import {
  createGuestLibrary,
  libraryCartridges,
  startGuestBench,
  stepChecker,
  type GuestCartridge,
} from './harness/guest-session.js';
import {
  expectInspectionTools,
  expectLoaded,
  expectPersistentReservation,
  expectTarArchivesReadBack,
  expectTarArchivesWritten,
  expectUnloadedAndMoved,
  type GuestTapeRun,
} from './harness/guest-tape-checks.js';
import { findQemu } from './guest/guest-image.js';
import { guestScript } from './guest/guest-script.js';
import { GUEST_PORTAL, runGuest, type GuestRun } from './guest/qemu-runner.js';

const GUEST_IQN = 'iqn.2026-11.test.guest:linux1';
/** Mutual CHAP, as a careful admin sets it up: the guest and the target each prove themselves. */
const CHAP = {
  username: 'linux1',
  secret: 'Guest-Chap-Secret1',
  targetUsername: 'vtl-node1',
  targetSecret: 'Target-Chap-Secret',
};
const LOAD_SLOT = 1;
const FROM_SLOT = 2;
const TO_SLOT = 6;
const CARTRIDGES = 4;
/** Software emulation on two busy cores: generous, though a run takes well under a minute. */
const GUEST_TIMEOUT_MS = 8 * 60_000;

const qemu = await findQemu();

/**
 * The strongest host check: a Linux guest under QEMU logs in with the kernel's own iSCSI
 * initiator (open-iscsi, mutual CHAP) and drives the library with the tools a backup admin uses: mtx on
 * the changer, mt-st and GNU tar on the st driver's non-rewinding tape device.
 */
describe.skipIf(!qemu)('a Linux host drives the library with mtx, mt-st and tar', () => {
  let app: Appliance;
  let libId: number;
  let before: GuestCartridge[];
  /** Serial of drive 0 as the status view shows it; the guest finds its tape device by it. */
  let driveSerial: string;
  let guest: GuestRun;
  /** The tape steps' checks shared with the TCMU guest test. */
  let run: GuestTapeRun;

  beforeAll(
    async () => {
      // Hard-deny, as shipped: the guest gets in because its IQN is registered below.
      const bench = await startGuestBench({ env: { VTL_ISCSI_OPEN: '0' }, keep: (a) => (app = a) });
      const lib = await createGuestLibrary(app, {
        name: 'linuxhost',
        labelPrefix: 'LNX',
        drives: 2,
        slots: 8,
        cartridges: CARTRIDGES,
      });
      libId = lib.id;
      before = lib.before;
      driveSerial = lib.driveSerials[0]!;
      const acl = await app.api.post('/api/targets/acls', {
        wwpn: GUEST_IQN,
        fabric: 'iscsi',
        chap: {
          username: CHAP.username,
          secret: CHAP.secret,
          mutual_username: CHAP.targetUsername,
          mutual_secret: CHAP.targetSecret,
        },
      });
      expect(acl.status, acl.text).toBe(200);
      const script = guestScript({
        initiatorIqn: GUEST_IQN,
        portal: GUEST_PORTAL,
        driveSerial,
        numDrives: 2,
        loadSlot: LOAD_SLOT,
        fromSlot: FROM_SLOT,
        toSlot: TO_SLOT,
        chap: CHAP,
      });
      const startedAt = Date.now();
      guest = await runGuest({
        qemu: qemu!,
        image: bench.image,
        script,
        targetPort: app.ports.iscsi,
        timeoutMs: GUEST_TIMEOUT_MS,
        // VTL_GUEST_CONSOLE=1 streams the guest's console while it runs.
        onLine: process.env.VTL_GUEST_CONSOLE ? (line) => console.log(`guest| ${line}`) : undefined,
      });
      run = {
        passed,
        before,
        cartridges,
        driveSerial,
        loadSlot: LOAD_SLOT,
        fromSlot: FROM_SLOT,
        toSlot: TO_SLOT,
      };
      console.info(
        `linux guest: ${guest.results.length} steps in ${Math.round((Date.now() - startedAt) / 1000)} s`,
      );
    },
    GUEST_TIMEOUT_MS + 5 * 60_000,
  );

  afterAll(async () => {
    await app?.destroy();
  });

  const cartridges = () => libraryCartridges(app, libId);
  /** The detail of a step the guest reported as ok; fails with the guest's log of that step. */
  const passed = stepChecker(() => guest);

  it('logs in with open-iscsi and mutual CHAP and finds the changer and the drive the API names', () => {
    expect(guest.finished, guest.console.slice(-3000)).toBe(true);
    expect(passed('discovery')).toBe('iqn.2026-11.io.vtl:node1');
    // open-iscsi's exit code for a login the target refused as an authentication failure.
    expect(passed('chap-refused')).toBe('exit=24');
    passed('login');
    expect(passed('devices')).toMatch(/changer=\/dev\/sg\d+ sch=\/dev\/sch0 tape=\/dev\/nst\d+ tapes=2/);
  });

  it('shows in mtx status the barcodes the API lists and loads a cartridge (mt-st sees BOT)', () => {
    expectLoaded(run);
  });

  it('writes three tar archives and positions the tape with mt-st', () => {
    expectTarArchivesWritten(run);
  });

  it('reads every tar archive back byte-exactly', () => {
    expectTarArchivesReadBack(run);
  });

  it('is what tapeinfo, loaderinfo, sg_modes, sg_logs, sg_opcodes and mtx inventory expect', () => {
    expectInspectionTools(run);
  });

  it('takes and gives back a persistent reservation of the drive with sg_persist', () => {
    expectPersistentReservation(run);
  });

  it('unloads and moves cartridges with mtx; the API and the journal see where they went', async () => {
    const { loaded, moved } = await expectUnloadedAndMoved(run);
    const written = (await cartridges()) as (GuestCartridge & { size_bytes: number })[];
    expect(written.find((c) => c.label === loaded)!.size_bytes).toBeGreaterThan(1_000_000);
    await waitFor(async () => {
      const events = (await app.api.get('/api/events/recent')).body as {
        kind: string;
        subject: string;
        detail?: string;
        data?: unknown;
      }[];
      const text = (e: (typeof events)[number]) => JSON.stringify(e);
      const moves = events.filter((e) => e.kind === 'cart_moved');
      const activity = events.filter((e) => e.kind === 'drive_activity' && e.subject === `drive:${libId}:0`);
      return (
        moves.some((e) => text(e).includes(loaded)) &&
        moves.some((e) => text(e).includes(moved)) &&
        activity.some((e) => /writing/.test(text(e))) &&
        activity.some((e) => /reading/.test(text(e)))
      );
    });
  });

  it('logs out; the appliance sees the session end', async () => {
    passed('logout');
    await waitFor(async () => (await app.api.get('/api/status')).body.fabrics.iscsi.sessions === 0);
  });
});

if (!qemu) {
  console.warn(
    'linux-guest.test.ts skipped: qemu-system-x86_64 is not on PATH (apt-get install qemu-system-x86)',
  );
  it.skip('a Linux host drives the library: skipped, qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)', () => {});
}
