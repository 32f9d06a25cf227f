import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { freePort } from '@vtl/store/testing';
import { fcPlan, type LioApplyRequest, type LunPlan } from '@vtl/nodeagent';
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
import { tcmuOverlay } from './guest/tcmu-overlay.js';
import { driverOverlay } from './guest/driver-overlay.js';

/** Where the guest's handler reaches the emulator's TCMU bridge (QEMU forwards it). */
const TCMU_GUEST_ENDPOINT = '10.0.2.101:4000';
/** The tcm_loop target the driver builds in the guest. */
const LOOP_WWN = 'naa.5001405aa0000001';
const LOAD_SLOT = 1;
const FROM_SLOT = 2;
const TO_SLOT = 6;
const CARTRIDGES = 4;
const GUEST_TIMEOUT_MS = 10 * 60_000;

const qemu = await findQemu();

/**
 * The Fibre Channel data path on a real Linux target core: the guest's kernel runs LIO with
 * TCMU backstores (one per LUN of the appliance's table) behind tcm_loop, so its own st, ch and
 * sg drivers see the library as an FC host would; the TCMU handler's front end (vtl-tcmu,
 * built from source) maps each backstore's ring and hands every command to the emulator's
 * SCSI core on the host. The same tools as the iSCSI guest test must see the same behaviour.
 */
describe.skipIf(!qemu)('a Linux host drives the library through LIO, TCMU and tcm_loop', () => {
  let app: Appliance;
  let libId: number;
  let before: GuestCartridge[];
  let driveSerial: string;
  let guest: GuestRun;
  /** The tape steps' checks shared with the iSCSI guest test. */
  let run: GuestTapeRun;
  /** The nodeagent pid killed while the guest wrote (agent-restart step). */
  let agentKill: Promise<number> | undefined;

  beforeAll(
    async () => {
      const tcmuPort = await freePort();
      const bench = await startGuestBench({
        env: { VTL_TCMU_LISTEN: `127.0.0.1:${tcmuPort}` },
        overlays: [tcmuOverlay, () => driverOverlay()],
        keep: (a) => (app = a),
      });
      const lib = await createGuestLibrary(app, {
        name: 'fchost',
        labelPrefix: 'FCL',
        drives: 2,
        slots: 8,
        cartridges: CARTRIDGES,
      });
      libId = lib.id;
      before = lib.before;
      driveSerial = lib.driveSerials[0]!;
      // The LUN table the nodeagent builds on an FC port, as the API shows it; the driver in the
      // guest builds it on the loopback fabric (no ACLs there: tcm_loop has none).
      const luns = await waitFor(async () => {
        const rows = ((await app.api.get('/api/targets')).body.luns ?? []) as Omit<
          LunPlan,
          'name' | 'config'
        >[];
        return rows.length === 3
          ? rows.map((r) => ({ ...r, name: path.basename(r.backstore), config: `vtl/${r.device}` }))
          : undefined;
      });
      const plan = fcPlan([], '', luns);
      const driverRequest: LioApplyRequest = {
        fabric: 'loopback',
        ports: [LOOP_WWN],
        nexus: 'naa.5001405bb0000001',
        plan: { ...plan, disabled: [...plan.disabled] },
      };
      const script = guestScript(
        {
          initiatorIqn: 'iqn.2026-11.test.guest:unused',
          portal: GUEST_PORTAL,
          driveSerial,
          numDrives: 2,
          loadSlot: LOAD_SLOT,
          fromSlot: FROM_SLOT,
          toSlot: TO_SLOT,
        },
        ['guest-steps.sh', 'fc-steps.sh'],
        {
          LOCAL_FABRIC: 'loopback',
          TCMU_ENDPOINT: TCMU_GUEST_ENDPOINT,
          LOOP_WWN,
          DRIVER_REQUEST: JSON.stringify(driverRequest),
        },
        ['fc-setup.sh'],
      );
      const startedAt = Date.now();
      guest = await runGuest({
        qemu: qemu!,
        image: bench.image,
        script,
        targetPort: app.ports.iscsi,
        forwards: [{ guest: TCMU_GUEST_ENDPOINT, hostPort: tcmuPort }],
        extraArchives: bench.overlays,
        // Node and the driver bundle live in the initramfs too.
        memoryMb: 1536,
        timeoutMs: GUEST_TIMEOUT_MS,
        onLine: (line) => {
          if (process.env.VTL_GUEST_CONSOLE) console.log(`guest| ${line}`);
          // The guest is writing: the nodeagent dies now (the launcher starts it again).
          if (line.trim() === 'VTL-KILL-NODEAGENT' && !agentKill)
            agentKill = app.restartProcess('nodeagent/dist/main.js', 'SIGKILL');
        },
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
        `fc guest: ${guest.results.length} steps in ${Math.round((Date.now() - startedAt) / 1000)} s`,
      );
    },
    GUEST_TIMEOUT_MS + 5 * 60_000,
  );

  afterAll(async () => {
    await app?.destroy();
  });

  const cartridges = () => libraryCartridges(app, libId);
  const passed = stepChecker(() => guest, ['handler', 'kernel']);

  it('builds TCMU backstores behind tcm_loop; st and ch find the changer and the drive the API names', () => {
    expect(guest.finished, guest.console.slice(-3000)).toBe(true);
    // Built by the nodeagent's driver: the backstores, the target and its nexus, the LUNs.
    expect(passed('fabric')).toMatch(new RegExp(`^luns=3 handler=\\d+ built="${LOOP_WWN}"$`));
    expect(passed('devices')).toMatch(/changer=\/dev\/sg\d+ sch=\/dev\/sch0 tape=\/dev\/nst\d+ tapes=2/);
  });

  it('shows in mtx status the barcodes the API lists and loads a cartridge', () => {
    expectLoaded(run);
  });

  it('writes three tar archives and positions by filemarks and blocks as over iSCSI', () => {
    expectTarArchivesWritten(run);
  });

  it('reads every tar archive back byte-exactly', () => {
    expectTarArchivesReadBack(run);
  });

  it('is what tapeinfo, loaderinfo and the inspection tools expect', () => {
    expectInspectionTools(run);
  });

  it('keeps persistent reservations in the kernel, keyed by the loopback nexus', () => {
    expectPersistentReservation(run);
  });

  it('survives its handler being killed during a write: the host gets an error, not a hang, and no acknowledged block is lost', () => {
    const detail = passed('restart');
    const m = /^dd-exit=(\d+) acked=(\d+) of 1024 read-back=same$/.exec(detail);
    expect(m, detail).not.toBeNull();
    // The kill hit commands in flight: dd saw an error, after some blocks were acknowledged.
    expect(Number(m![1])).not.toBe(0);
    expect(Number(m![2])).toBeGreaterThan(0);
    expect(Number(m![2])).toBeLessThan(1024);
  });

  it('keeps writing while the nodeagent is killed and restarted: it is not on the data path', async () => {
    expect(passed('agent-restart')).toBe('dd-exit=0 blocks=512 read-back=same');
    expect(agentKill, 'the guest never asked for the nodeagent kill').toBeDefined();
    const killed = await agentKill!;
    await waitFor(async () => {
      const pid = await app.childPid('nodeagent/dist/main.js');
      return pid !== undefined && pid !== killed;
    });
  });

  it('moves the same data through tcm_loop/TCMU and through the emulator iSCSI target (docs/fc.md figures)', () => {
    const detail = passed('perf');
    const m = /^KiB\/s tcmu: write=(\d+) read=(\d+) iscsi: write=(\d+) read=(\d+)$/.exec(detail);
    expect(m, detail).not.toBeNull();
    const [tw, tr, iw, ir] = m!.slice(1).map(Number) as [number, number, number, number];
    for (const v of [tw, tr, iw, ir]) expect(v).toBeGreaterThan(0);
    console.info(
      `fc guest throughput (KiB/s, software emulation): tcm_loop/TCMU write ${tw} read ${tr}; ` +
        `iSCSI write ${iw} read ${ir}; TCMU/iSCSI write ${(tw / iw).toFixed(2)} read ${(tr / ir).toFixed(2)}`,
    );
    // Where a TCMU command's time goes (vtl-tcmu's counters: write phase | read phase).
    const profile = passed('perf-profile');
    expect(profile).toMatch(/^cmds=\d+ .*avg-us wait=\d+ send=\d+ service=\d+ recv=\d+\|cmds=\d+ /);
    console.info(`fc guest TCMU profile (drive 0, write | read): ${profile}`);
  });

  it('unloads and moves cartridges with mtx; the API sees where they went', async () => {
    await expectUnloadedAndMoved(run);
  });
});

if (!qemu) {
  it.skip('FC through LIO/TCMU: skipped, qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)', () => {});
}
