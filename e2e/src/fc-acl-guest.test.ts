import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@vtl/reconcile';
import { freePort } from '@vtl/store/testing';
import { fcPlan, type LioApplyRequest, type LunPlan } from '@vtl/nodeagent';
import type { Appliance } from './harness/appliance.js';
import {
  createGuestLibrary,
  startGuestBench,
  stepChecker,
  type GuestLibrary,
} from './harness/guest-session.js';
import { driverOverlay } from './guest/driver-overlay.js';
import { findQemu } from './guest/guest-image.js';
import { guestShell } from './guest/guest-script.js';
import { runGuest, type GuestRun } from './guest/qemu-runner.js';
import { tcmuOverlay } from './guest/tcmu-overlay.js';

const TCMU_GUEST_ENDPOINT = '10.0.2.101:4000';
/** LIO's iSCSI target in the guest, and the three initiator names its open-iscsi logs in with. */
const ITARGET = 'iqn.2026-11.io.vtl:fc-acl';
const LPORTAL = '127.0.0.1:3260';
const IQN_ALL = 'iqn.2026-11.test.fc:all';
const IQN_SCOPED = 'iqn.2026-11.test.fc:scoped';
const IQN_STRANGER = 'iqn.2026-11.test.fc:stranger';
const GUEST_TIMEOUT_MS = 10 * 60_000;

const qemu = await findQemu();

interface ObservedAcl {
  wwpn: string;
  mapped_luns: number[];
  logged_in: boolean;
  session: string;
}
interface LioResult {
  problems: string[];
  verify: string[];
  built: string[];
  acls: ObservedAcl[];
}

/**
 * The FC target's access rules on a real Linux target core. LIO's iscsi fabric has qla2xxx's TPG,
 * node ACL and mapped-LUN semantics; the nodeagent's LIO driver (its built code, run by Node in
 * the guest) builds the target from the plan the fabric reconciler makes, and the guest's own
 * open-iscsi logs in as a registered host, a host scoped to one library and a stranger. Their
 * commands reach the appliance's emulator through TCMU. Then the emulator is killed mid-write.
 */
describe.skipIf(!qemu)('FC access rules on a real target core (LIO iscsi fabric, node ACLs, TCMU)', () => {
  let app: Appliance;
  let libA: GuestLibrary;
  let libB: GuestLibrary;
  let luns: LunPlan[];
  let guest: GuestRun;
  let emulatorKill: Promise<number | undefined> | undefined;
  const passed = stepChecker(() => guest, ['handler']);
  const lio = (step: string) => JSON.parse(passed(step).replace(/^[^{]*/, '')) as LioResult;
  const aclOf = (r: LioResult, wwpn: string) => r.acls.find((a) => a.wwpn === wwpn);
  /** `lun:type,...` a host sees for a set of libraries (type 8 changer, 1 tape). */
  const seen = (libs: number[]) =>
    luns
      .filter((l) => libs.includes(l.library))
      .map((l) => `${l.lun}:${l.name.endsWith('-changer') ? 8 : 1}`)
      .join(',');

  beforeAll(
    async () => {
      const tcmuPort = await freePort();
      const bench = await startGuestBench({
        env: { VTL_TCMU_LISTEN: `127.0.0.1:${tcmuPort}` },
        overlays: [tcmuOverlay, () => driverOverlay()],
        keep: (a) => (app = a),
      });
      libA = await createGuestLibrary(app, {
        name: 'acla',
        labelPrefix: 'ACA',
        drives: 1,
        slots: 4,
        cartridges: 2,
      });
      libB = await createGuestLibrary(app, {
        name: 'aclb',
        labelPrefix: 'ACB',
        drives: 1,
        slots: 4,
        cartridges: 2,
      });
      // The LUN table the nodeagent builds its backstores from, as the API shows it.
      luns = await waitFor(async () => {
        const rows = ((await app.api.get('/api/targets')).body.luns ?? []) as Omit<
          LunPlan,
          'name' | 'config'
        >[];
        return rows.length === 4
          ? rows.map((r) => ({ ...r, name: path.basename(r.backstore), config: `vtl/${r.device}` }))
          : undefined;
      });
      // Registered FC initiators as the registry holds them; the fabric reconciler's plan of them.
      const registry = (scopedTo: number) => [
        { wwpn: IQN_ALL, fabric: 'fc' as const, ports: '', libraries: '' },
        { wwpn: IQN_SCOPED, fabric: 'fc' as const, ports: '', libraries: String(scopedTo) },
      ];
      const target = { fabric: 'iscsi' as const, ports: [ITARGET], portal: LPORTAL };
      const request = (scopedTo?: number): LioApplyRequest => {
        if (scopedTo === undefined) return target;
        const plan = fcPlan(registry(scopedTo), '', luns);
        return { ...target, plan: { ...plan, disabled: [...plan.disabled] } };
      };
      const slotA = Number(libA.before[0]!.location.slice(5));
      const script = guestShell(
        {
          TCMU_ENDPOINT: TCMU_GUEST_ENDPOINT,
          ITARGET,
          LPORTAL,
          IQN_ALL,
          IQN_SCOPED,
          IQN_STRANGER,
          REQ_APPLY: JSON.stringify(request(libA.id)),
          REQ_SCOPE: JSON.stringify(request(libB.id)),
          REQ_OBSERVE: JSON.stringify(request()),
          SLOT_A: slotA,
        },
        ['fc-setup.sh', 'fc-acl-steps.sh'],
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
          if (line.trim() === 'VTL-KILL-EMULATOR' && !emulatorKill)
            emulatorKill = app.emulatorPid().then((pid) => {
              if (pid) process.kill(pid, 'SIGKILL');
              return pid;
            });
        },
      });
      console.info(
        `fc acl guest: ${guest.results.length} steps in ${Math.round((Date.now() - startedAt) / 1000)} s`,
      );
    },
    GUEST_TIMEOUT_MS + 5 * 60_000,
  );

  afterAll(async () => {
    await app?.destroy();
  });

  it("builds the target with the nodeagent's driver: hard deny, one node ACL per registered host", () => {
    expect(guest.finished, guest.console.slice(-3000)).toBe(true);
    passed('fabric');
    const detail = passed('acl-apply');
    expect(detail).toMatch(/^generate_node_acls=0 enable=1 /);
    const result = lio('acl-apply');
    expect(result.problems).toEqual([]);
    expect(result.verify).toEqual([]);
    expect(result.built).toEqual([ITARGET]);
    expect(aclOf(result, IQN_ALL)?.mapped_luns).toEqual(luns.map((l) => l.lun));
    expect(aclOf(result, IQN_SCOPED)?.mapped_luns).toEqual(
      luns.filter((l) => l.library === libA.id).map((l) => l.lun),
    );
    expect(aclOf(result, IQN_STRANGER)).toBeUndefined();
  });

  it('lets registered hosts in with exactly their LUNs and refuses the stranger', () => {
    const login = /^all=(\d+) scoped=(\d+) stranger=(\d+)$/.exec(passed('acl-login'));
    expect(login, passed('acl-login')).not.toBeNull();
    expect(login![1]).toBe('0');
    expect(login![2]).toBe('0');
    // open-iscsi's exit status for a login the target refused (authorization failure).
    expect(login![3]).not.toBe('0');
    expect(passed('acl-luns')).toBe(
      `all=${seen([libA.id, libB.id])} scoped=${seen([libA.id])} stranger=none`,
    );
    const observed = lio('acl-observe');
    expect(aclOf(observed, IQN_ALL)?.logged_in).toBe(true);
    expect(aclOf(observed, IQN_SCOPED)?.logged_in).toBe(true);
  });

  it("runs the scoped host's commands on the emulator's devices through TCMU", () => {
    expect(passed('acl-io')).toBe('changer=3573-TL blocks=16 read-back=same');
  });

  it('applies a scope change by bouncing only the host whose scope changed', () => {
    const before = lio('acl-observe');
    const changed = lio('scope-change');
    expect(changed.problems).toEqual([]);
    expect(aclOf(changed, IQN_SCOPED)?.mapped_luns).toEqual(
      luns.filter((l) => l.library === libB.id).map((l) => l.lun),
    );
    // The other host's session is the same kernel session throughout.
    expect(aclOf(changed, IQN_ALL)?.session).toBe(aclOf(before, IQN_ALL)?.session);
    expect(passed('scope-relogin')).toBe(`login=0 all=${seen([libA.id, libB.id])} scoped=${seen([libB.id])}`);
    const after = lio('scope-observe');
    expect(aclOf(after, IQN_ALL)?.session).toBe(aclOf(before, IQN_ALL)?.session);
    expect(aclOf(after, IQN_SCOPED)?.logged_in).toBe(true);
    expect(aclOf(after, IQN_SCOPED)?.session).not.toBe(aclOf(before, IQN_SCOPED)?.session);
  });

  it('survives the emulator being killed during a write: an error, no hang, no acknowledged block lost', async () => {
    const detail = passed('emulator-kill');
    const m = /^dd-exit=(\d+) acked=(\d+) of 512 read-back=same$/.exec(detail);
    expect(m, detail).not.toBeNull();
    expect(Number(m![1])).not.toBe(0);
    expect(Number(m![2])).toBeGreaterThan(0);
    expect(Number(m![2])).toBeLessThan(512);
    expect(emulatorKill, 'the guest never asked for the emulator kill').toBeDefined();
    const killed = await emulatorKill!;
    expect(killed).toBeDefined();
    // The nodeagent started a new one.
    await waitFor(async () => {
      const pid = await app.emulatorPid();
      return pid !== undefined && pid !== killed;
    });
  });
});

if (!qemu) {
  it.skip('FC ACLs on LIO: skipped, qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)', () => {});
}
