import path from 'node:path';
import type { ConfigFs } from './configfs.js';
import { fromQlaWwn, toQlaWwn } from './wwn.js';

/** Where qla2xxx targets live in configfs (the directory loads tcm_qla2xxx when created). */
export const QLA_FABRIC = 'target/qla2xxx';
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
  ) {
    this.path = `${tpgPath}/acls/${toQlaWwn(wwpn)}`;
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

/** The qla2xxx target of one FC port and its only TPG (`tpgt_1`). */
export class QlaTpg {
  readonly targetPath: string;
  readonly path: string;
  constructor(
    private readonly cfs: ConfigFs,
    readonly port: string,
  ) {
    this.targetPath = `${QLA_FABRIC}/${toQlaWwn(port)}`;
    this.path = `${this.targetPath}/tpgt_1`;
  }

  /** Target and TPG exist, ACL-only (generate_node_acls 0: hard deny). */
  async ensure(): Promise<void> {
    await this.cfs.ensureGroup('target');
    await this.cfs.ensureGroup(QLA_FABRIC);
    await this.cfs.ensureGroup(this.targetPath);
    await this.cfs.ensureGroup(this.path);
    if ((await this.cfs.read(`${this.path}/attrib/generate_node_acls`)) !== '0')
      await this.cfs.write(`${this.path}/attrib/generate_node_acls`, '0');
  }

  exists(): Promise<boolean> {
    return this.cfs.exists(this.path);
  }

  async enabled(): Promise<boolean> {
    return (await this.cfs.read(`${this.path}/enable`)) === '1';
  }

  /** Writes `enable` only when it changes: a rewrite would be a needless port event. */
  async setEnabled(on: boolean): Promise<void> {
    if ((await this.enabled()) !== on) await this.cfs.write(`${this.path}/enable`, on ? '1' : '0');
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
      const wwpn = fromQlaWwn(n);
      return wwpn ? [new NodeAcl(this.cfs, this.path, wwpn)] : [];
    });
  }

  acl(wwpn: string): NodeAcl {
    return new NodeAcl(this.cfs, this.path, wwpn);
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
    await this.cfs.removeGroup(this.path);
    await this.cfs.removeGroup(this.targetPath);
  }
}

/** Backstore name of a library device: `vtl-lib<id>-changer`, `vtl-lib<id>-drive<n>`. */
export function backstoreName(library: number, kind: 'changer' | 'drive', drive = 0): string {
  return kind === 'changer' ? `vtl-lib${library}-changer` : `vtl-lib${library}-drive${drive}`;
}

/** The basename a LUN link resolves to (its backstore's name). */
export const linkedName = (target: string) => path.basename(target);
