import type { FcHostPort } from './fc-hosts.js';
import { fromQlaWwn, toQlaWwn } from './wwn.js';

/**
 * The LIO fabric modules the driver builds targets on. `qla2xxx` is production (a QLogic HBA
 * in target mode); `loopback` (tcm_loop: the same kernel's SCSI layer sees the LUNs) and
 * `iscsi` (LIO's own iSCSI target: TPGs, node ACLs and mapped LUNs as qla2xxx has them) need no
 * HBA, so the driver's ACL logic can be proven on a real target core (docs/fc.md).
 */
export type LioFabricName = 'qla2xxx' | 'loopback' | 'iscsi';

export const LIO_FABRICS: readonly LioFabricName[] = ['qla2xxx', 'loopback', 'iscsi'];

/** How one fabric spells its objects in configfs; the driver's logic is the same for all. */
export interface LioFabric {
  readonly name: LioFabricName;
  /** configfs directory of the fabric (creating it loads the fabric module). */
  readonly dir: string;
  /** Target group name of a port (`naa.` WWPN, or an IQN for iscsi). */
  targetName(port: string): string;
  /** Node ACL group name of an initiator, and back (undefined: not a name of this fabric). */
  aclName(initiator: string): string;
  initiatorOf(aclName: string): string | undefined;
  /**
   * The TPG has `attrib/generate_node_acls` (hard deny when 0). tcm_loop has none: its only
   * initiator is the local host, and it always runs in demo mode.
   */
  readonly hardDeny: boolean;
  /** The TPG is switched with `enable` (qla2xxx, iscsi) or by its I_T nexus (tcm_loop). */
  readonly switchedBy: 'enable' | 'nexus';
}

const naaOrIqn = (name: string) =>
  /^naa\.[0-9a-f]{16}$/i.test(name) ||
  /^iqn\.\d{4}-\d{2}\.[^\s]+$/i.test(name) ||
  /^eui\.[0-9a-f]{16}$/i.test(name)
    ? name
    : undefined;

export const QLA2XXX: LioFabric = {
  name: 'qla2xxx',
  dir: 'target/qla2xxx',
  targetName: toQlaWwn,
  aclName: toQlaWwn,
  initiatorOf: fromQlaWwn,
  hardDeny: true,
  switchedBy: 'enable',
};

export const LOOPBACK: LioFabric = {
  name: 'loopback',
  dir: 'target/loopback',
  targetName: (port) => port,
  aclName: (initiator) => initiator,
  initiatorOf: naaOrIqn,
  hardDeny: false,
  switchedBy: 'nexus',
};

export const ISCSI: LioFabric = {
  name: 'iscsi',
  dir: 'target/iscsi',
  targetName: (port) => port,
  aclName: (initiator) => initiator,
  initiatorOf: naaOrIqn,
  hardDeny: true,
  switchedBy: 'enable',
};

export function lioFabric(name: LioFabricName): LioFabric {
  return name === 'loopback' ? LOOPBACK : name === 'iscsi' ? ISCSI : QLA2XXX;
}

/**
 * Where the driver's "host ports" come from: qla2xxx reads the HBA ports from sysfs; the test
 * fabrics serve the target names they are given (a tcm_loop WWN, an iSCSI target IQN).
 */
export function configuredPorts(fabric: LioFabric, names: readonly string[]): FcHostPort[] {
  return names.map((wwpn) => ({ host: fabric.name, wwpn, state: 'Online', speed: 'unknown' }));
}
