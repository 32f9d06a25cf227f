import type { Logger } from 'pino';
import type { DataPlane, TransportStarter } from '../dataplane.js';
import { buildDataPlaneLuns } from '../dataplane-luns.js';
import { startIscsiTarget } from './iscsi/target.js';
import { DEFAULT_TCP_CONGESTION } from './iscsi/tcp-tuning.js';
import { IscsiAccessTable } from './iscsi-access.js';
import { startTcmuBridge, type TcmuBridge } from '../tcmu/bridge.js';
import { resolveTcmuConfig } from '../tcmu/dev-config.js';

/** The one iSCSI target a node serves: every library's changer and drives are its LUNs. */
export function nodeTargetName(node: string): string {
  return `iqn.2026-11.io.vtl:${node.toLowerCase().replace(/[^a-z0-9.-]/g, '-')}`;
}

/**
 * Serves the data plane over iSCSI. Initiators are hard-denied unless the initiator registry
 * (pushed by the nodeagent with `set_access`; until the first push, the configuration's
 * bootstrap allow-list) names them, or the target is open. Each sees only the LUNs of the
 * libraries in its scope, re-read on every command, so a scope change applies without a logout.
 */
export function iscsiTransport(logger: Logger, opts: { tcmuListen?: string } = {}): TransportStarter {
  return async (dp: DataPlane) => {
    const { iscsi, node } = dp.config;
    const devices = await buildDataPlaneLuns(dp);
    const targetName = nodeTargetName(node);
    const access = new IscsiAccessTable(devices.luns, devices.layout, iscsi.allowed_initiators, iscsi.open);
    if (iscsi.open)
      logger.warn(
        'VTL_ISCSI_OPEN is on: every iSCSI initiator may log in and sees every LUN (demos and tests only)',
      );
    // A drive's LUN to its inventory, looked up on every command (the iSCSI byte counters).
    const driveAt = new Map(
      devices.layout.flatMap((r) => {
        const inventory = dp.libraries.get(r.library)?.inventory;
        return r.kind === 'drive' && inventory ? [[r.lun, { inventory, drive: r.drive! }] as const] : [];
      }),
    );
    let target;
    try {
      target = await startIscsiTarget({
        bind: iscsi.bind,
        port: iscsi.port,
        targetName,
        luns: (name) => access.lunsFor(name),
        authorize: (name) => access.allows(name),
        chap: (name) => access.chapFor(name),
        // Journalled (emu_* events reach the event stream): a guesser is visible to operators.
        onChapLockout: (name, failures, lockoutMs) =>
          dp.bus.emit({
            kind: 'emu_chap_lockout',
            subject: name,
            detail: `${failures} wrong CHAP answers from ${name}; its CHAP logins are refused for ${Math.ceil(lockoutMs / 1000)} s`,
            data: { initiator: name, failures, lockout_ms: lockoutMs },
          }),
        logger: logger.child({ component: 'iscsi' }),
        tcpCongestion: iscsi.tcp_congestion ?? DEFAULT_TCP_CONGESTION,
        onTransfer: (lun, bytes) => {
          const at = driveAt.get(lun);
          at?.inventory.recordIscsiBytes(at.drive, bytes);
        },
      });
    } catch (err) {
      await devices.close();
      throw err;
    }
    // The LIO backstores' handler (Fibre Channel hosts): the same devices, another front door.
    let tcmu: TcmuBridge | undefined;
    if (opts.tcmuListen) {
      try {
        tcmu = await startTcmuBridge({
          listen: opts.tcmuListen,
          resolve: (config) => resolveTcmuConfig(config, targetName, devices.luns),
          logger: logger.child({ component: 'tcmu' }),
        });
      } catch (err) {
        await target.stop();
        await devices.close();
        throw err;
      }
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
      logins: () => [
        ...new Set(
          target
            .sessions()
            .filter((s) => s.type === 'Normal')
            .map((s) => s.initiatorName.toLowerCase()),
        ),
      ],
      setAccess: (initiators) => {
        const removed = access.replace(initiators);
        const dropped = removed.reduce((n, name) => n + target.disconnect(name), 0);
        if (removed.length > 0) logger.info({ removed, dropped }, 'iSCSI initiators deregistered');
        logger.debug(
          { initiators: initiators.length, chap: initiators.filter((i) => i.chap).length },
          'iSCSI initiator registry applied',
        );
        return dropped;
      },
      stop: async () => {
        await tcmu?.stop();
        await target.stop();
        await devices.close();
      },
    };
  };
}
