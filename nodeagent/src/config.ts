import os from 'node:os';
import path from 'node:path';
import { DEFAULT_TCP_CONGESTION, isCongestionControlName } from '@vtl/emulator';
// The codec's module alone: the package index would load the S3 client at start.
import { DEFAULT_CODEC_NICE, DEFAULT_ZSTD_LEVEL, ZSTD_LEVELS } from '@vtl/offsite/codec-pool';
import { LIO_FABRICS, type LioFabricName } from './fabric/lio-fabric.js';
import { PACER_MAX_PAUSE_MS } from './storage/dedup-pacer.js';
import type { LioDriverOptions } from './fabric/lio-driver.js';
import { storeSettingsFromEnv, type StoreSettings } from '@vtl/store';
import { healthSettingsFromEnv, type HealthSettings } from '@vtl/reconcile';

/** Nodeagent settings, from the environment (README lists every variable). */
export interface NodeagentConfig {
  node: string;
  stateDir: string;
  /** Endpoints, client certificate, sealing key (it opens the S3 secret keys) and deadline of the store. */
  store: StoreSettings;
  /** A directory pool created on first start when no pool exists yet (single-node default). */
  defaultPoolPath: string;
  /** Where the node's shared btrfs storage is mounted (VTL_STORAGE_MOUNT; docs/storage.md). */
  storageMount: string;
  /**
   * A dedup pass paused this long in a row for host I/O runs on for a while anyway
   * (VTL_DEDUP_MAX_PAUSE_MINUTES, default 30; 0: it waits for quiet however long; PassPacer).
   */
  dedupMaxPauseMs: number;
  bind: string;
  iscsiPort: number;
  iscsiOpen: boolean;
  /**
   * Bootstrap IQNs (VTL_ISCSI_INITIATORS) a freshly started emulator lets in until the nodeagent
   * pushes the initiator registry, moments later; from then on only the registry counts.
   */
  iscsiInitiators: string[];
  /** TCP congestion control of the emulator's iSCSI connections ('' keeps the system's). */
  iscsiTcpCongestion: string;
  /** `os` asks the operating system to reboot; `sentinel:<file>` creates a host file a reboot daemon (kured) acts on; `record:<file>` only appends a line (tests). */
  hostPower: string;
  /** Stop the emulator when the nodeagent stops (single-node `npm start`); off on an appliance. */
  stopEmulatorOnExit: boolean;
  /**
   * vtl-tcmu, supervised beside the emulator when both are set: VTL_TCMU_HANDLER (the binary)
   * and VTL_TCMU_LISTEN (the emulator's TCMU bridge, which the emulator reads too).
   */
  tcmuHandler: { binary: string; listen: string } | undefined;
  emulatorEntry: string;
  /**
   * A systemd unit that runs the emulator (deploy/systemd/vtl-emulator.service): the nodeagent
   * writes its configuration and restarts the unit instead of spawning it. `container`: the
   * emulator runs in a container of its own whose runner (emulator-runner.ts) starts it on the
   * configuration written. Empty: spawned.
   */
  emulatorUnit: string;
  /** configfs mount (LIO targets, backstores); tests point it at a kernel-like tree. */
  configfsRoot: string;
  /** sysfs mount (FC host ports under class/fc_host). */
  sysfsRoot: string;
  /** Export chunk size in bytes (VTL_EXPORT_CHUNK_BYTES); undefined: the offsite engine's default. Small in tests. */
  exportChunkBytes: number | undefined;
  /** Longest pause between a pool's figure walks (VTL_POOL_REFRESH_MAX_MS, default 60 s); short in tests. */
  poolRefreshMaxMs: number | undefined;
  /** Nice value of the zstd/SHA-256 codec threads (VTL_CODEC_NICE, default 5); 0: normal priority. */
  codecNice: number;
  /** zstd level of exports (VTL_ZSTD_LEVEL, default 3, 1–19): CPU against stored bytes. */
  zstdLevel: number;
  /** The release written into a bucket's system file (VTL_VERSION). */
  version: string;
  /** host:port of the reconcile metrics endpoint (GET /metrics); '' serves none. */
  metricsAddr: string;
  /** Where the probes listen (VTL_HEALTH_PORT, VTL_HEALTH_BIND); port 0: nowhere. */
  health: HealthSettings;
  /** The LIO fabric the FC driver builds on (qla2xxx; loopback and iscsi for tests, docs/fc.md). */
  lio: LioDriverOptions;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): NodeagentConfig {
  const stateDir = path.resolve(env.VTL_STATE_DIR ?? 'var');
  return {
    node: env.VTL_NODE ?? os.hostname(),
    stateDir,
    store: storeSettingsFromEnv(env, stateDir),
    defaultPoolPath: env.VTL_DEFAULT_POOL ?? '',
    storageMount: path.resolve(env.VTL_STORAGE_MOUNT || path.join(stateDir, 'storage')),
    dedupMaxPauseMs: dedupMaxPause(env.VTL_DEDUP_MAX_PAUSE_MINUTES),
    bind: env.VTL_BIND ?? '127.0.0.1',
    iscsiPort: Number.parseInt(env.VTL_ISCSI_PORT ?? '3260', 10),
    iscsiOpen: env.VTL_ISCSI_OPEN === '1',
    iscsiInitiators: (env.VTL_ISCSI_INITIATORS ?? '').split(',').filter(Boolean),
    iscsiTcpCongestion: tcpCongestion(env.VTL_ISCSI_TCP_CONGESTION),
    hostPower: env.VTL_HOST_POWER ?? 'os',
    stopEmulatorOnExit: env.VTL_STOP_EMULATOR_ON_EXIT === '1',
    tcmuHandler:
      env.VTL_TCMU_HANDLER && env.VTL_TCMU_LISTEN
        ? { binary: path.resolve(env.VTL_TCMU_HANDLER), listen: env.VTL_TCMU_LISTEN }
        : undefined,
    configfsRoot: env.VTL_CONFIGFS_ROOT ?? '/sys/kernel/config',
    sysfsRoot: env.VTL_SYSFS_ROOT ?? '/sys',
    lio: lioOptions(env),
    emulatorEntry: env.VTL_EMULATOR_ENTRY ?? path.resolve(import.meta.dirname, '../../emulator/dist/main.js'),
    emulatorUnit: env.VTL_EMULATOR_UNIT ?? '',
    exportChunkBytes: Number(env.VTL_EXPORT_CHUNK_BYTES) || undefined,
    poolRefreshMaxMs: Number(env.VTL_POOL_REFRESH_MAX_MS) || undefined,
    codecNice: Number(env.VTL_CODEC_NICE ?? DEFAULT_CODEC_NICE),
    zstdLevel: zstdLevel(env.VTL_ZSTD_LEVEL),
    version: env.VTL_VERSION ?? 'v0.0.0',
    metricsAddr: env.VTL_NODEAGENT_METRICS_ADDR ?? '',
    health: healthSettingsFromEnv(env),
  };
}

function lioOptions(env: NodeJS.ProcessEnv): LioDriverOptions {
  const fabric = env.VTL_LIO_FABRIC || 'qla2xxx';
  if (!(LIO_FABRICS as readonly string[]).includes(fabric))
    throw new Error(`VTL_LIO_FABRIC must be one of ${LIO_FABRICS.join(', ')}, got "${fabric}"`);
  const ports = (env.VTL_LIO_PORTS ?? '').split(',').filter(Boolean);
  if (fabric !== 'qla2xxx' && ports.length === 0)
    throw new Error(
      `VTL_LIO_FABRIC=${fabric} needs VTL_LIO_PORTS: the target names to serve (no HBA to read them from)`,
    );
  return {
    fabric: fabric as LioFabricName,
    ports,
    portal: env.VTL_LIO_PORTAL || undefined,
    nexus: env.VTL_LIO_NEXUS || undefined,
  };
}

function zstdLevel(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_ZSTD_LEVEL;
  const level = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(level >= ZSTD_LEVELS.min && level <= ZSTD_LEVELS.max)) {
    throw new Error(
      `VTL_ZSTD_LEVEL must be a whole number from ${ZSTD_LEVELS.min} (fastest) to ${ZSTD_LEVELS.max} (smallest), got "${value}"`,
    );
  }
  return level;
}

function tcpCongestion(value: string | undefined): string {
  if (value === undefined) return DEFAULT_TCP_CONGESTION;
  if (value !== '' && !isCongestionControlName(value)) {
    throw new Error(
      `VTL_ISCSI_TCP_CONGESTION must name a TCP congestion control (cubic, reno, bbr, ...) or be empty, got "${value}"`,
    );
  }
  return value;
}

/** VTL_DEDUP_MAX_PAUSE_MINUTES in ms: whole minutes from 0 (no bound) to a week. */
function dedupMaxPause(value: string | undefined): number {
  if (value === undefined || value === '') return PACER_MAX_PAUSE_MS;
  const minutes = Number(value);
  if (!Number.isInteger(minutes) || minutes < 0 || minutes > 7 * 24 * 60)
    throw new Error(`VTL_DEDUP_MAX_PAUSE_MINUTES must be whole minutes from 0 to 10080, not ${value}`);
  return minutes * 60_000;
}
