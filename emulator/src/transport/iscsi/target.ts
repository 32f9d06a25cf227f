import { type AddressInfo, type Server, createServer } from 'node:net';
import { pino, type Logger } from 'pino';
import type { LunMap, ScsiDevice } from '../../scsi/types.js';
import type { ChapCredentials } from './chap.js';
import { ChapThrottle } from './chap-throttle.js';
import { IscsiConnection } from './connection.js';
import type { LoginOutcome, LunAccess } from './login.js';
import { DEFAULT_TARGET_LIMITS, type TargetLimits } from './negotiation.js';
import type { IscsiSession } from './session.js';
import { setCongestionControl } from './tcp-tuning.js';
import type { KeyValue } from './text-keys.js';

/** An authorization rule's answer: refuse (false), everything (true), or only these LUNs. */
export type Authorization = boolean | ReadonlySet<number>;

export interface IscsiTargetOptions {
  /** Address to listen on (default 0.0.0.0). */
  bind?: string;
  /** TCP port (default 3260; 0 picks a free one). */
  port?: number;
  /** The target's iSCSI name (iqn.…). */
  targetName: string;
  targetAlias?: string;
  /** The LUN map an initiator sees, asked per command so live changes apply at once. */
  luns: LunMap | ((initiatorName: string) => LunMap);
  /**
   * Who may log in and which LUNs they see. Refusal is a login reject with AUTHORIZATION
   * FAILURE (0x0202). Without a rule only `open` lets anyone in.
   */
  authorize?: (initiatorName: string) => Authorization | Promise<Authorization>;
  /**
   * CHAP credentials of an initiator, asked at each login (so changes apply to the next login);
   * undefined: AuthMethod=None. Applies to discovery sessions too, and also when `open`.
   */
  chap?: (initiatorName: string) => ChapCredentials | undefined;
  /** Lets every initiator in with every LUN, ignoring `authorize`. */
  open?: boolean;
  /**
   * Told when wrong CHAP answers lock an initiator name out (chap-throttle.ts): a few wrong
   * answers are free, then each further one refuses that name's CHAP logins for longer.
   */
  onChapLockout?: (initiatorName: string, failures: number, lockoutMs: number) => void;
  logger?: Logger;
  limits?: Partial<TargetLimits>;
  portalGroupTag?: number;
  loginTimeoutMs?: number;
  /** Interval of keep-alive NOP-In pings; 0 (default) disables them. */
  nopInIntervalMs?: number;
  /** Commands an initiator may have outstanding per session. */
  commandWindow?: number;
  /** TCP congestion control of the connections (tcp-tuning.ts); unset or '' keeps the system's. */
  tcpCongestion?: string;
  /**
   * Told, per command that ran, of the data it moved on its LUN: Data-Out bytes received
   * (`written`) and Data-In bytes sent (`read`). Called on the I/O path: keep it to a count.
   */
  onTransfer?: (lun: number, bytes: { read: number; written: number }) => void;
}

/** A logged-in session as operators and status reports see it. */
export interface IscsiSessionInfo {
  tsih: number;
  isid: string;
  initiatorName: string;
  initiatorAlias?: string;
  type: 'Normal' | 'Discovery';
  remoteAddress: string;
  loggedInAt: Date;
  headerDigest: boolean;
  dataDigest: boolean;
  outstandingTasks: number;
}

export interface IscsiTarget {
  readonly port: number;
  readonly address: string;
  sessions(): IscsiSessionInfo[];
  /** Drops every session of an initiator (its ACL changed); returns how many were dropped. */
  disconnect(initiatorName: string): number;
  stop(): Promise<void>;
}

/** Starts a userspace iSCSI target (RFC 7143, ErrorRecoveryLevel 0, one connection per session). */
export async function startIscsiTarget(opts: IscsiTargetOptions): Promise<IscsiTarget> {
  const logger = opts.logger ?? pino({ level: 'silent' });
  const limits: TargetLimits = { ...DEFAULT_TARGET_LIMITS, ...opts.limits };
  const lunsFor = typeof opts.luns === 'function' ? opts.luns : () => opts.luns as LunMap;
  const connections = new Set<IscsiConnection>();
  const sessions = new Map<number, { session: IscsiSession; connection: IscsiConnection }>();
  let lastTsih = 0;
  const chapThrottle = new ChapThrottle();

  const authorize = async (initiatorName: string): Promise<LunAccess | undefined> => {
    if (opts.open) return 'all';
    if (!opts.authorize) return undefined;
    const decision = await opts.authorize(initiatorName);
    if (decision === false) return undefined;
    return decision === true ? 'all' : decision;
  };

  const visibleLuns = (login: LoginOutcome): LunMap => {
    const all = lunsFor(login.initiatorName);
    const access = login.access;
    if (access === 'all') return all;
    return new Map([...all].filter(([lun]) => access.has(lun)));
  };

  const sendTargets = (value: string, connection: IscsiConnection, login: LoginOutcome): KeyValue[] => {
    const wanted =
      value === 'All'
        ? login.type === 'Discovery'
        : value === '' || value.toLowerCase() === opts.targetName.toLowerCase();
    if (!wanted) return [];
    const host = connection.localAddress.includes(':')
      ? `[${connection.localAddress}]`
      : connection.localAddress;
    return [
      ['TargetName', opts.targetName],
      ['TargetAddress', `${host}:${connection.localPort},${opts.portalGroupTag ?? 1}`],
    ];
  };

  const resetLogicalUnit = async (device: ScsiDevice, by: string): Promise<void> => {
    await Promise.all([...sessions.values()].map(({ session }) => session.abortTasksOn(device)));
    device.notify?.({ kind: 'lun-reset', by });
  };

  const server: Server = createServer({ pauseOnConnect: true }, (socket) => {
    const connection = new IscsiConnection(socket, {
      logger,
      loginTimeoutMs: opts.loginTimeoutMs ?? 15_000,
      nopInIntervalMs: opts.nopInIntervalMs ?? 0,
      commandWindow: opts.commandWindow ?? 64,
      policy: {
        targetName: opts.targetName,
        ...(opts.targetAlias ? { targetAlias: opts.targetAlias } : {}),
        portalGroupTag: opts.portalGroupTag ?? 1,
        limits,
        authorize,
        ...(opts.chap ? { chap: opts.chap } : {}),
        chapThrottle,
        onChapLockout: (name, failures, lockoutMs) => {
          logger.warn({ initiator: name, failures, lockoutMs }, 'CHAP logins of an initiator locked out');
          opts.onChapLockout?.(name, failures, lockoutMs);
        },
        sessionExists: (tsih) => sessions.has(tsih),
        allocateTsih: () => {
          do lastTsih = (lastTsih % 0xffff) + 1;
          while (sessions.has(lastTsih));
          return lastTsih;
        },
      },
      sessionEnv: (login, conn) => ({
        luns: () => visibleLuns(login),
        sendTargets: (value) => sendTargets(value, conn, login),
        resetLogicalUnit,
        transferred: (lun, bytes) => opts.onTransfer?.(lun, bytes),
      }),
      onSession: (session, conn) => {
        // Session reinstatement: a new login with the same initiator and ISID replaces the old one.
        for (const [tsih, entry] of sessions) {
          if (entry.session.nexus === session.nexus) {
            entry.connection.close('session reinstated');
            sessions.delete(tsih);
          }
        }
        sessions.set(session.login.tsih, { session, connection: conn });
      },
      onClose: (conn) => {
        connections.delete(conn);
        const tsih = conn.session?.login.tsih;
        if (tsih !== undefined && sessions.get(tsih)?.connection === conn) sessions.delete(tsih);
      },
    });
    connections.add(connection);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 3260, opts.bind ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const congestion = opts.tcpCongestion
    ? chooseCongestionControl(server, opts.tcpCongestion, logger)
    : undefined;
  logger.info(
    { target: opts.targetName, address: address.address, port: address.port, tcpCongestion: congestion },
    'iSCSI target listening',
  );

  return {
    port: address.port,
    address: address.address,
    sessions: () =>
      [...sessions.values()].map(({ session, connection }) => ({
        tsih: session.login.tsih,
        isid: session.login.isid.toString('hex'),
        initiatorName: session.login.initiatorName,
        ...(session.login.initiatorAlias ? { initiatorAlias: session.login.initiatorAlias } : {}),
        type: session.login.type,
        remoteAddress: connection.remoteAddress,
        loggedInAt: session.loggedInAt,
        headerDigest: session.params.headerDigest,
        dataDigest: session.params.dataDigest,
        outstandingTasks: session.tasks.size,
      })),
    disconnect: (initiatorName) => {
      let n = 0;
      for (const { session, connection } of sessions.values()) {
        if (session.login.initiatorName.toLowerCase() !== initiatorName.toLowerCase()) continue;
        connection.socket.destroy();
        n++;
      }
      return n;
    },
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.socket.destroy();
      await closed;
    },
  };
}

/** Applies the configured congestion control; a refusal is logged and the system's stays. */
function chooseCongestionControl(server: Server, algorithm: string, logger: Logger): string | undefined {
  const why = setCongestionControl(server, algorithm);
  if (why === undefined) return algorithm;
  logger.warn(
    { tcpCongestion: algorithm, reason: why },
    `iSCSI connections keep the system's TCP congestion control: ${algorithm} could not be set (${why}); ` +
      'set VTL_ISCSI_TCP_CONGESTION to one the kernel offers, or to nothing to stop trying',
  );
  return undefined;
}
