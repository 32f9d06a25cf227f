import path from 'node:path';
import { storeSettingsFromEnv, type StoreSettings } from '@vtl/store';
import { loadUpdateConfig, type UpdateConfig } from './services/update-config.js';

/** Apiserver settings, from the environment (README lists every variable). */
export interface ApiserverConfig {
  stateDir: string;
  /**
   * Endpoints, client certificate, sealing key (it seals the secrets it writes) and deadline of
   * the store: the most one store call made for a request waits; past it the answer is 503.
   */
  store: StoreSettings;
  bind: string;
  httpsPort: number;
  /** 0 disables the plaintext listener. */
  plainPort: number;
  /** How long a request waits for the process that carries it out before answering 504. */
  opTimeoutMs: number;
  /**
   * The overall deadline of one whole remote (S3) operation the controller runs for a request
   * (a listing, a folder deletion, a catalog scan, a probe, each read of a recovery); past it the
   * answer is 504 remote_unreachable naming the endpoint.
   */
  remoteDeadlineMs: number;
  /** Interval of the keepalive comment on GET /api/events (§6.1: 20 s). */
  sseKeepaliveMs: number;
  /** How long a login session lasts. */
  sessionTtlSec: number;
  /** An operator's own HTTPS certificate and key (PEM); both or neither. Default: the self-signed pair. */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** A connection that has not finished its TLS handshake by then is closed (VTL_TLS_HANDSHAKE_TIMEOUT_MS). */
  tlsHandshakeTimeoutMs: number;
  /** Open HTTPS connections one client address may hold; more are closed at once (VTL_MAX_CONNECTIONS_PER_CLIENT). */
  maxConnectionsPerClient: number;
  /** The first admin's password, from a file (a mounted Secret) instead of a random one written to the state dir. */
  initialAdminPasswordFile?: string;
  /** Files holding this machine's durable identity (the support fingerprint), first readable wins. */
  machineIdFiles: string[];
  /** The built web console served at / (VTL_CONSOLE_DIR, default where `npm run build` puts it). */
  consoleDir: string;
  /** pino level (VTL_LOG_LEVEL); debug adds a line per successful read (plugins/request-log.ts). */
  logLevel: string;
  /** Signed updates (VTL_RELEASES_DIR, VTL_UPDATE_*). */
  update: UpdateConfig;
  /**
   * The environment this process was configured from, handed whole to the detached updater it
   * starts (which reads its own settings from it, in updater/src/updater-config.ts).
   */
  childEnv: NodeJS.ProcessEnv;
}

const int = (value: string | undefined, fallback: number) => {
  if (value === undefined || value === '') return fallback;
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a non-negative integer, got "${value}"`);
  return n;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ApiserverConfig {
  const stateDir = path.resolve(env.VTL_STATE_DIR ?? 'var');
  return {
    stateDir,
    store: storeSettingsFromEnv(env, stateDir),
    bind: env.VTL_BIND ?? '127.0.0.1',
    httpsPort: int(env.VTL_HTTPS_PORT, 8443),
    plainPort: int(env.VTL_PLAIN_PORT, 8080),
    opTimeoutMs: int(env.VTL_OP_TIMEOUT_MS, 120_000),
    remoteDeadlineMs: Math.max(1, int(env.VTL_REMOTE_DEADLINE_MS, 30_000)),
    sseKeepaliveMs: Math.max(1, int(env.VTL_SSE_KEEPALIVE_MS, 20_000)),
    sessionTtlSec: Math.max(1, int(env.VTL_SESSION_TTL_SEC, 12 * 3600)),
    tlsHandshakeTimeoutMs: Math.max(1, int(env.VTL_TLS_HANDSHAKE_TIMEOUT_MS, 10_000)),
    maxConnectionsPerClient: Math.max(1, int(env.VTL_MAX_CONNECTIONS_PER_CLIENT, 256)),
    ...(env.VTL_TLS_CERT_FILE ? { tlsCertFile: path.resolve(env.VTL_TLS_CERT_FILE) } : {}),
    ...(env.VTL_TLS_KEY_FILE ? { tlsKeyFile: path.resolve(env.VTL_TLS_KEY_FILE) } : {}),
    ...(env.VTL_INITIAL_ADMIN_PASSWORD_FILE
      ? { initialAdminPasswordFile: path.resolve(env.VTL_INITIAL_ADMIN_PASSWORD_FILE) }
      : {}),
    machineIdFiles: env.VTL_MACHINE_ID_FILE
      ? [env.VTL_MACHINE_ID_FILE]
      : ['/etc/machine-id', '/var/lib/dbus/machine-id', '/sys/class/dmi/id/product_uuid'],
    consoleDir: path.resolve(env.VTL_CONSOLE_DIR || path.join(import.meta.dirname, '../../console/dist')),
    logLevel: env.VTL_LOG_LEVEL || 'info',
    update: loadUpdateConfig(stateDir, env),
    childEnv: env,
  };
}
