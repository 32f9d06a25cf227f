import path from 'node:path';
import type { ConfigFs } from './configfs.js';
import { QLA2XXX, type LioFabric } from './lio-fabric.js';

/** Where qla2xxx targets live in configfs (the directory loads tcm_qla2xxx when created). */
export const QLA_FABRIC = QLA2XXX.dir;
/** The TCMU (userspace passthrough) HBA every appliance backstore sits on. */
export const TCMU_HBA = 'target/core/user_1';
/** NodeACL `tag` of the ACLs this appliance made; ACLs without it are someone else's (unmanaged). */
export const OWNER_TAG = 'vtl-appliance';

/**
 * A TCMU backstore: the kernel side of one emulator device (changer or drive). `config` is the
 * handler's dev_config (`vtl/<device>`), which the userspace handler uses to find the device.
 */
export class TcmuBackstore {
  readonly path: string;
  constructor(
    private readonly cfs: ConfigFs,
    readonly name: string,
    private readonly config: string,
  ) {
    this.path = `${TCMU_HBA}/${name}`;
  }

  /** Creates and enables it; an enabled one with the same dev_config is left alone. */
  async ensure(): Promise<void> {
    await this.cfs.ensureGroup('target');
    await this.cfs.ensureGroup('target/core');
    await this.cfs.ensureGroup(TCMU_HBA);
    await this.cfs.ensureGroup(this.path);
    if ((await this.cfs.read(`${this.path}/enable`)) === '1') return;
    await this.cfs.write(`${this.path}/control`, `dev_config=${this.config}`);
    await this.cfs.write(`${this.path}/control`, 'dev_size=0');
    await this.cfs.write(`${this.path}/enable`, '1');
  }

  async delete(): Promise<void> {
    await this.cfs.removeGroup(this.path);
  }
}

/** A mapped LUN: `lun_<n>` of a node ACL linking to the TPG's `lun_<n>`. */
async function createMappedLun(cfs: ConfigFs, aclPath: string, tpgPath: string, lun: number) {
  const dir = `${aclPath}/lun_${lun}`;
  await cfs.ensureGroup(dir);
  try {
    await cfs.ensureLink(`${tpgPath}/lun/lun_${lun}`, `${dir}/tpg_lun_${lun}`);
    await cfs.write(`${dir}/write_protect`, '0');
  } catch (err) {
    await deleteMappedLun(cfs, dir).catch(() => undefined);
    throw err;
  }
}

async function deleteMappedLun(cfs: ConfigFs, dir: string) {
  for (const link of await cfs.links(dir)) await cfs.unlink(`${dir}/${link.name}`);
  await cfs.removeGroup(dir);
}

const lunNumber = (name: string) => (/^lun_(\d+)$/.test(name) ? Number(name.slice(4)) : undefined);

/** A node ACL: one initiator allowed through one TPG, with the LUNs it sees. */
export class NodeAcl {
  readonly path: string;
  constructor(
    private readonly cfs: ConfigFs,
    private readonly tpgPath: string,
    readonly wwpn: string,
    fabric: LioFabric = QLA2XXX,
  ) {
    this.path = `${tpgPath}/acls/${fabric.aclName(wwpn)}`;
  }

  exists(): Promise<boolean> {
    return this.cfs.exists(this.path);
  }

  async owned(): Promise<boolean> {
    return (await this.cfs.read(`${this.path}/tag`)) === OWNER_TAG;
  }

  async mappedLuns(): Promise<number[]> {
    return (await this.cfs.groups(this.path))
      .map(lunNumber)
      .filter((n): n is number => n !== undefined)
      .sort((a, b) => a - b);
  }

  /** The kernel session id while the initiator is logged in ('' otherwise), from `info` as rtslib reads it. */
  async session(): Promise<string> {
    const info = await this.cfs.read(`${this.path}/info`);
    if (!info || info.startsWith('No active')) return '';
    return /LIO Session ID:\s*(\d+)/.exec(info)?.[1] ?? '';
  }

  /** Creates the ACL with exactly these mapped LUNs; a half-made one is removed again. */
  async create(luns: readonly number[]): Promise<void> {
    await this.cfs.ensureGroup(this.path);
    try {
      await this.cfs.write(`${this.path}/tag`, OWNER_TAG);
      for (const lun of luns) await createMappedLun(this.cfs, this.path, this.tpgPath, lun);
    } catch (err) {
      await this.delete().catch(() => undefined);
      throw err;
    }
  }

  /** Removes its mapped LUNs, then the ACL (which ends the initiator's session). */
  async delete(): Promise<void> {
    for (const lun of await this.mappedLuns()) await deleteMappedLun(this.cfs, `${this.path}/lun_${lun}`);
    await this.cfs.removeGroup(this.path);
  }

  /** Drops the mapping of one TPG LUN (the kernel refuses to remove a LUN still mapped). */
  async unmap(lun: number): Promise<void> {
    if ((await this.mappedLuns()).includes(lun)) await deleteMappedLun(this.cfs, `${this.path}/lun_${lun}`);
  }
}

/** What a test fabric's TPG needs beyond qla2xxx's. */
export interface TpgOptions {
  /** iscsi: the network portal (`IPV4:PORT`) the TPG listens on. */
  portal?: string;
  /** loopback: the initiator name of the local host's I_T nexus (its SCSI host). */
  nexus?: string;
}

/** The target of one port on a LIO fabric and its only TPG (`tpgt_1`). */
export class LioTpg {
  readonly targetPath: string;
  readonly path: string;
  constructor(
    private readonly cfs: ConfigFs,
    readonly port: string,
    readonly fabric: LioFabric = QLA2XXX,
    private readonly opts: TpgOptions = {},
  ) {
    this.targetPath = `${fabric.dir}/${fabric.targetName(port)}`;
    this.path = `${this.targetPath}/tpgt_1`;
  }

  /** Target and TPG exist, ACL-only (generate_node_acls 0: hard deny) where the fabric has it. */
  async ensure(): Promise<void> {
    await this.cfs.ensureGroup('target');
    await this.cfs.ensureGroup(this.fabric.dir);
    await this.cfs.ensureGroup(this.targetPath);
    await this.cfs.ensureGroup(this.path);
    if (this.fabric.hardDeny && (await this.cfs.read(`${this.path}/attrib/generate_node_acls`)) !== '0')
      await this.cfs.write(`${this.path}/attrib/generate_node_acls`, '0');
    if (this.fabric.name === 'iscsi') {
      // No CHAP on LIO's iSCSI test fabric (the registry's CHAP belongs to the emulator's target).
      if ((await this.cfs.read(`${this.path}/attrib/authentication`)) !== '0')
        await this.cfs.write(`${this.path}/attrib/authentication`, '0');
      if (this.opts.portal) await this.cfs.ensureGroup(`${this.path}/np/${this.opts.portal}`);
    }
  }

  exists(): Promise<boolean> {
    return this.cfs.exists(this.path);
  }

  async enabled(): Promise<boolean> {
    if (this.fabric.switchedBy === 'nexus') return ((await this.cfs.read(`${this.path}/nexus`)) ?? '') !== '';
    return (await this.cfs.read(`${this.path}/enable`)) === '1';
  }

  /**
   * Writes `enable` only when it changes: a rewrite would be a needless port event. tcm_loop
   * has no `enable`: its I_T nexus (the local SCSI host) is made or dropped instead.
   */
  async setEnabled(on: boolean): Promise<void> {
    if ((await this.enabled()) === on) return;
    if (this.fabric.switchedBy === 'enable') return this.cfs.write(`${this.path}/enable`, on ? '1' : '0');
    if (on && !this.opts.nexus) throw new Error('a loopback TPG needs a nexus initiator name to be enabled');
    await this.cfs.write(`${this.path}/nexus`, on ? this.opts.nexus! : 'NULL');
  }

  /** TPG LUN number → absolute path of the backstore it links to ('' when broken). */
  async luns(): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const name of await this.cfs.groups(`${this.path}/lun`)) {
      const n = lunNumber(name);
      if (n === undefined) continue;
      out.set(n, (await this.cfs.links(`${this.path}/lun/${name}`))[0]?.target ?? '');
    }
    return out;
  }

  async createLun(lun: number, backstore: TcmuBackstore): Promise<void> {
    const dir = `${this.path}/lun/lun_${lun}`;
    await this.cfs.ensureGroup(dir);
    try {
      await this.cfs.ensureLink(backstore.path, `${dir}/${backstore.name}`);
    } catch (err) {
      await this.cfs.removeGroup(dir).catch(() => undefined);
      throw err;
    }
  }

  /** Removes a TPG LUN and every ACL's mapping of it first. */
  async removeLun(lun: number): Promise<void> {
    for (const acl of await this.acls()) await acl.unmap(lun);
    const dir = `${this.path}/lun/lun_${lun}`;
    for (const link of await this.cfs.links(dir)) await this.cfs.unlink(`${dir}/${link.name}`);
    await this.cfs.removeGroup(dir);
  }

  async acls(): Promise<NodeAcl[]> {
    const names = await this.cfs.groups(`${this.path}/acls`);
    return names.flatMap((n) => {
      const wwpn = this.fabric.initiatorOf(n);
      return wwpn ? [new NodeAcl(this.cfs, this.path, wwpn, this.fabric)] : [];
    });
  }

  acl(wwpn: string): NodeAcl {
    return new NodeAcl(this.cfs, this.path, wwpn, this.fabric);
  }

  /**
   * Stops serving the port: disabling the TPG ends every session on it; the appliance's ACLs
   * and LUNs go. ACLs someone else made stay (never deleted), and so does the target holding them.
   */
  async retire(): Promise<void> {
    if (!(await this.exists())) return;
    await this.setEnabled(false);
    const foreign: NodeAcl[] = [];
    for (const acl of await this.acls()) {
      if (await acl.owned()) await acl.delete();
      else foreign.push(acl);
    }
    for (const lun of (await this.luns()).keys()) await this.removeLun(lun);
    if (foreign.length > 0) return;
    // Portals are groups userspace made: the kernel refuses to remove a TPG that still has one.
    for (const np of await this.cfs.groups(`${this.path}/np`))
      await this.cfs.removeGroup(`${this.path}/np/${np}`);
    await this.cfs.removeGroup(this.path);
    await this.cfs.removeGroup(this.targetPath);
  }
}

/** The qla2xxx target of one FC port (production). */
export class QlaTpg extends LioTpg {
  constructor(cfs: ConfigFs, port: string) {
    super(cfs, port, QLA2XXX);
  }
}

/** Backstore name of a library device: `vtl-lib<id>-changer`, `vtl-lib<id>-drive<n>`. */
export function backstoreName(library: number, kind: 'changer' | 'drive', drive = 0): string {
  return kind === 'changer' ? `vtl-lib${library}-changer` : `vtl-lib${library}-drive${drive}`;
}

/** The basename a LUN link resolves to (its backstore's name). */
export const linkedName = (target: string) => path.basename(target);
