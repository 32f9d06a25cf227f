import { scopeIncludes, type ObservedAcl } from '@vtl/api';
import { ConfigFs } from './configfs.js';
import { readFcHostPorts, type FcHostPort } from './fc-hosts.js';
import { configuredPorts, lioFabric, type LioFabric, type LioFabricName } from './lio-fabric.js';
import { TCMU_HBA, LioTpg, TcmuBackstore, linkedName, type TpgOptions } from './lio-objects.js';
import type { LunPlan } from './lun-table.js';

/** One registered FC initiator as the kernel should hold it. */
export interface AclPlan {
  wwpn: string;
  /** Port scope as stored ('' all, '-' none, else naa. list). */
  ports: string;
  /** TPG LUNs it sees. */
  luns: number[];
}

/** What the FC target should be: served ports, the LUN table, the registered initiators. */
export interface FcPlan {
  /** Ports excluded from serving (`fc.disabled_ports`). */
  disabled: ReadonlySet<string>;
  luns: readonly LunPlan[];
  acls: readonly AclPlan[];
}

/** What the kernel holds now. */
export interface FcObservation {
  ports: FcHostPort[];
  /** Ports whose target exists and is enabled. */
  built: Set<string>;
  acls: ObservedAcl[];
}

const same = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

/** Which fabric the driver builds on, and what the HBA-less test fabrics need to know. */
export interface LioDriverOptions extends TpgOptions {
  /** Default `qla2xxx` (production). */
  fabric?: LioFabricName;
  /** loopback / iscsi: the target names to serve (a tcm_loop `naa.` WWN, an iSCSI target IQN). */
  ports?: readonly string[];
}

/**
 * The LIO Fibre Channel driver: targets over configfs with TCMU backstores, qla2xxx host ports
 * from sysfs (or, on the test fabrics `loopback` and `iscsi`, the configured target names).
 * `apply` touches only what differs from the plan (an unchanged initiator's ACL, and so its
 * session, is never rewritten); `rebuild` additionally cycles every served TPG, which ends
 * every session as an activation does. ACLs the appliance did not make are reported and never
 * deleted. The ACL logic is the same on every fabric; only the configfs spelling differs.
 */
export class LioFcDriver {
  readonly cfs: ConfigFs;
  readonly fabric: LioFabric;
  constructor(
    configfsRoot: string,
    private readonly sysfsRoot: string,
    private readonly opts: LioDriverOptions = {},
  ) {
    this.cfs = new ConfigFs(configfsRoot);
    this.fabric = lioFabric(opts.fabric ?? 'qla2xxx');
  }

  /** FC host ports of this node (none: no HBA), or the test fabric's configured targets. */
  async hostPorts(): Promise<FcHostPort[]> {
    if (this.fabric.name !== 'qla2xxx') return configuredPorts(this.fabric, this.opts.ports ?? []);
    return readFcHostPorts(this.sysfsRoot);
  }

  private tpg(port: string): LioTpg {
    return new LioTpg(this.cfs, port, this.fabric, this.opts);
  }

  /** Brings the kernel to the plan; returns one problem text per port or object that failed. */
  async apply(plan: FcPlan, opts: { rebuild?: boolean } = {}): Promise<string[]> {
    const ports = await this.hostPorts();
    if (ports.length === 0) return [];
    const problems: string[] = [];
    const backstores = new Map(plan.luns.map((l) => [l.lun, new TcmuBackstore(this.cfs, l.name, l.config)]));
    for (const b of backstores.values())
      await b.ensure().catch((err: Error) => problems.push(`backstore ${b.name}: ${err.message}`));
    for (const port of ports) {
      await this.applyPort(port.wwpn, plan, backstores, opts.rebuild === true).catch((err: Error) =>
        problems.push(`port ${port.wwpn}: ${err.message}`),
      );
    }
    const wanted = new Set(plan.luns.map((l) => l.name));
    for (const name of await this.cfs.groups(TCMU_HBA)) {
      if (!name.startsWith('vtl-') || wanted.has(name)) continue;
      await new TcmuBackstore(this.cfs, name, '')
        .delete()
        .catch((err: Error) => problems.push(`backstore ${name}: ${err.message}`));
    }
    return problems;
  }

  private async applyPort(
    port: string,
    plan: FcPlan,
    backstores: Map<number, TcmuBackstore>,
    rebuild: boolean,
  ): Promise<void> {
    const tpg = this.tpg(port);
    if (plan.disabled.has(port)) return tpg.retire();
    await tpg.ensure();
    if (rebuild) await tpg.setEnabled(false);
    // tcm_loop probes each LUN as it is linked, through its nexus: that must exist first (on
    // the HBA fabrics, enabling comes last, so hosts log in to a finished TPG).
    if (this.fabric.switchedBy === 'nexus') await tpg.setEnabled(true);

    const have = await tpg.luns();
    for (const [lun, target] of have) {
      const want = backstores.get(lun);
      if (!want || linkedName(target) !== want.name) await tpg.removeLun(lun);
    }
    const now = await tpg.luns();
    for (const [lun, backstore] of backstores) if (!now.has(lun)) await tpg.createLun(lun, backstore);

    const wanted = new Map(plan.acls.filter((a) => scopeIncludes(a.ports, port)).map((a) => [a.wwpn, a]));
    for (const acl of await tpg.acls()) {
      if (!wanted.has(acl.wwpn) && (await acl.owned())) await acl.delete();
    }
    for (const want of wanted.values()) {
      const acl = tpg.acl(want.wwpn);
      const luns = [...want.luns].sort((a, b) => a - b);
      if (await acl.exists()) {
        // Unchanged: leave it, so the host's session is not disturbed.
        if ((await acl.owned()) && same(await acl.mappedLuns(), luns)) continue;
        await acl.delete(); // a changed LUN map recreates the ACL: that host's session bounces
      }
      await acl.create(luns);
    }
    await tpg.setEnabled(true);
  }

  /** Reads back ports, built targets and every ACL with its session. */
  async observe(): Promise<FcObservation> {
    const ports = await this.hostPorts();
    const built = new Set<string>();
    const acls: ObservedAcl[] = [];
    for (const port of ports) {
      const tpg = this.tpg(port.wwpn);
      if (!(await tpg.exists())) continue;
      if (await tpg.enabled()) built.add(port.wwpn);
      for (const acl of await tpg.acls()) {
        const session = await acl.session();
        acls.push({
          port: port.wwpn,
          wwpn: acl.wwpn,
          mapped_luns: await acl.mappedLuns(),
          logged_in: session !== '',
          session,
        });
      }
    }
    return { ports, built, acls };
  }

  /** Checks the kernel against the plan: every served port built with exactly the LUN table. */
  async verify(plan: FcPlan): Promise<string[]> {
    const problems: string[] = [];
    for (const port of await this.hostPorts()) {
      if (plan.disabled.has(port.wwpn)) continue;
      const tpg = this.tpg(port.wwpn);
      if (!(await tpg.exists()) || !(await tpg.enabled())) {
        problems.push(`port ${port.wwpn} has no enabled target`);
        continue;
      }
      const luns = await tpg.luns();
      for (const l of plan.luns)
        if (linkedName(luns.get(l.lun) ?? '') !== l.name)
          problems.push(`port ${port.wwpn} LUN ${l.lun} is not ${l.name}`);
      if (luns.size !== plan.luns.length)
        problems.push(`port ${port.wwpn} has ${luns.size} LUNs, wants ${plan.luns.length}`);
    }
    for (const l of plan.luns)
      if ((await this.cfs.read(`${TCMU_HBA}/${l.name}/enable`)) !== '1')
        problems.push(`backstore ${l.name} is not enabled`);
    return problems;
  }
}
