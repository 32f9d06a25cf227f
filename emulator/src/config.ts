import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { LTO_GENERATIONS, VtlError } from '@vtl/api/base';
import type { EmulatorConfig, EmulatorLibraryConfig } from './control/protocol.js';
import { DEFAULT_TCP_CONGESTION, isCongestionControlName } from './transport/iscsi/tcp-tuning.js';

const invalid = (message: string) => new VtlError('validation_failed', `emulator config: ${message}`);

function obj(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(`${where} must be an object`);
  return v as Record<string, unknown>;
}
function str(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw invalid(`${where}.${key} must be a string`);
  return v;
}
function int(o: Record<string, unknown>, key: string, where: string, min: number, max: number): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(`${where}.${key} must be an integer from ${min} to ${max}`);
  }
  return v;
}
function strings(o: Record<string, unknown>, key: string, where: string): string[] {
  const v = o[key];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))
    throw invalid(`${where}.${key} must be strings`);
  return v as string[];
}

function library(raw: unknown, i: number): EmulatorLibraryConfig {
  const where = `libraries[${i}]`;
  const o = obj(raw, where);
  const generation = int(o, 'generation', where, 1, 99);
  if (!LTO_GENERATIONS.some((g) => g.gen === generation))
    throw invalid(`${where}.generation ${generation} is not LTO-3..10`);
  const driveSerials = strings(o, 'drive_serials', where);
  if (driveSerials.length === 0) throw invalid(`${where}.drive_serials needs one serial per drive`);
  return {
    id: int(o, 'id', where, 1, 1_000_000),
    name: str(o, 'name', where),
    serial: str(o, 'serial', where),
    product: str(o, 'product', where),
    vendor: str(o, 'vendor', where),
    drive_product: str(o, 'drive_product', where),
    drive_serials: driveSerials,
    num_slots: int(o, 'num_slots', where, 1, 10_000),
    num_ie: int(o, 'num_ie', where, 0, 255),
    media_dir: resolve(str(o, 'media_dir', where)),
    generation,
  };
}

/** Checks an EmulatorConfig read from JSON; media_dir paths come back absolute. */
export function parseEmulatorConfig(raw: unknown): EmulatorConfig {
  const o = obj(raw, 'config');
  const iscsi = obj(o.iscsi, 'iscsi');
  if (typeof iscsi.open !== 'boolean') throw invalid('iscsi.open must be a boolean');
  const tcpCongestion = iscsi.tcp_congestion ?? DEFAULT_TCP_CONGESTION;
  if (typeof tcpCongestion !== 'string' || (tcpCongestion !== '' && !isCongestionControlName(tcpCongestion)))
    throw invalid('iscsi.tcp_congestion must be a congestion control name (cubic, reno, bbr, ...) or empty');
  if (!Array.isArray(o.libraries)) throw invalid('libraries must be an array');
  const libraries = o.libraries.map(library);
  const ids = new Set(libraries.map((l) => l.id));
  const dirs = new Set(libraries.map((l) => l.media_dir));
  if (ids.size !== libraries.length) throw invalid('library ids must be unique');
  // inventory.json lives in media_dir, so two libraries cannot share one.
  if (dirs.size !== libraries.length) throw invalid('each library needs its own media_dir');
  return {
    node: str(o, 'node', 'config'),
    generation: int(o, 'generation', 'config', 0, Number.MAX_SAFE_INTEGER),
    socket: resolve(str(o, 'socket', 'config')),
    iscsi: {
      bind: str(iscsi, 'bind', 'iscsi'),
      port: int(iscsi, 'port', 'iscsi', 0, 65535),
      open: iscsi.open,
      allowed_initiators: strings(iscsi, 'allowed_initiators', 'iscsi'),
      tcp_congestion: tcpCongestion,
    },
    libraries,
  };
}

export async function readEmulatorConfig(path: string): Promise<EmulatorConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw invalid(`cannot read ${path}: ${(err as Error).message}`);
  }
  return parseEmulatorConfig(raw);
}

/** What the emulator process takes from its environment (the rest comes from its --config file). */
export interface EmulatorEnv {
  /** VTL_UNLOAD_GUARD_MS: overrides the 15 s operator-unload quiet window (tests); undefined keeps it. */
  unloadGuardMs: number | undefined;
  /** VTL_TCMU_LISTEN: where the vtl-tcmu handler connects (emulator/src/tcmu); undefined serves none. */
  tcmuListen: string | undefined;
}

/** Reads the emulator's environment; a malformed value throws, naming the variable. */
export function loadEmulatorEnv(env: NodeJS.ProcessEnv = process.env): EmulatorEnv {
  const guard = env.VTL_UNLOAD_GUARD_MS;
  const unloadGuardMs = guard !== undefined && guard !== '' ? Number(guard) : undefined;
  if (unloadGuardMs !== undefined && !(unloadGuardMs >= 0)) {
    throw invalid(`VTL_UNLOAD_GUARD_MS must be a number of milliseconds, got "${guard}"`);
  }
  return { unloadGuardMs, tcmuListen: env.VTL_TCMU_LISTEN || undefined };
}
