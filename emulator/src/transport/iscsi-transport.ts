import type { Logger } from 'pino';
import type { DataPlane, TransportStarter } from '../dataplane.js';
import { buildDataPlaneLuns } from '../dataplane-luns.js';
import { startIscsiTarget } from './iscsi/target.js';

/** The one iSCSI target a node serves: every library's changer and drives are its LUNs. */
export function nodeTargetName(node: string): string {
  return `iqn.2026-11.io.vtl:${node.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`;
}

/**
 * Serves the data plane over iSCSI. Initiators are hard-denied unless their IQN is on the
 * allow-list of the configuration (the initiator registry feeds it), or the target is open.
 */
export function iscsiTransport(logger: Logger): TransportStarter {
  return async (dp: DataPlane) => {
    const { iscsi, node } = dp.config;
    const devices = await buildDataPlaneLuns(dp);
    const targetName = nodeTargetName(node);
    const allowed = new Set(iscsi.allowed_initiators);
    if (iscsi.open)
      logger.warn(
        'VTL_ISCSI_OPEN is on: every iSCSI initiator may log in and sees every LUN (demos and tests only)',
      );
    let target;
    try {
      target = await startIscsiTarget({
        bind: iscsi.bind,
        port: iscsi.port,
        targetName,
        luns: devices.luns,
        open: iscsi.open,
        authorize: (name) => allowed.has(name),
        logger: logger.child({ component: 'iscsi' }),
      });
    } catch (err) {
      await devices.close();
      throw err;
    }
    const lunOf = (library: number, kind: 'changer' | 'drive', drive?: number) =>
      devices.layout.find(
        (r) => r.library === library && r.kind === kind && (kind === 'changer' || r.drive === drive),
      )?.lun;
    logger.info(
      { targetName, portal: `${iscsi.bind}:${target.port}`, luns: devices.layout.length },
      'iSCSI target serving',
    );
    return {
      portal: `${iscsi.bind}:${target.port}`,
      changerName: (library) => `${targetName}:lun${lunOf(library, 'changer')}`,
      driveName: (library, drive) => `${targetName}:lun${lunOf(library, 'drive', drive)}`,
      sessions: () => target.sessions().filter((s) => s.type === 'Normal').length,
      stop: async () => {
        await target.stop();
        await devices.close();
      },
    };
  };
}
