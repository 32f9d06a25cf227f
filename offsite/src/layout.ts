import type { RemoteConnection } from './remote.js';
import { keyBase } from './remote.js';

/** Generation names: YYYYMMDDTHHMMSSZ (UTC). */
export const GENERATION = /^\d{8}T\d{6}Z$/;

/** Generation names come from the API's one definition (§2.17). */
export { newGeneration } from '@vtl/api';

/** Where a cartridge generation lives: <prefix>/<system>/<serial>/<label>/<generation>/ */
export interface GenerationRef {
  system: string;
  library_serial: string;
  label: string;
  generation: string;
}

export const MANIFEST_FILE = 'manifest.json';
export const TOPOLOGY_FILE = 'topology.json';
export const SYSTEM_FILE = '.vtl-system.json';
/** chunk-NNNNN.tar.zst: the five-digit counter of spec §2.17. */
export const CHUNK_FILE = /^chunk-(\d{5})\.tar\.zst$/;
/** The probe object of probeRemote, under the remote's prefix. */
export const PROBE_PREFIX = '.vtl-probe-';

/** chunk-00007.tar.zst */
export function chunkName(n: number): string {
  return `chunk-${String(n).padStart(5, '0')}.tar.zst`;
}

/** Refuses path segments that would escape or blur the layout ('', '.', '..', or with '/'). */
function segment(value: string, what: string): string {
  if (!value || value === '.' || value === '..' || value.includes('/')) {
    throw new Error(`${what} "${value}" cannot be a bucket key segment`);
  }
  return value;
}

/** The generation folder, relative to the remote prefix: system/serial/label/generation/ */
export function generationFolder(ref: GenerationRef): string {
  if (!GENERATION.test(ref.generation)) {
    throw new Error(`generation "${ref.generation}" is not of the form YYYYMMDDTHHMMSSZ`);
  }
  return `${segment(ref.system, 'system')}/${segment(ref.library_serial, 'library serial')}/${segment(ref.label, 'label')}/${ref.generation}/`;
}

/** Full bucket keys of spec §2.17 for one remote. */
export const keysOf = (remote: RemoteConnection) => {
  const base = keyBase(remote);
  return {
    base,
    generation: (ref: GenerationRef) => `${base}${generationFolder(ref)}`,
    chunk: (ref: GenerationRef, n: number) => `${base}${generationFolder(ref)}${chunkName(n)}`,
    manifest: (ref: GenerationRef) => `${base}${generationFolder(ref)}${MANIFEST_FILE}`,
    topology: (system: string, serial: string) =>
      `${base}${segment(system, 'system')}/${segment(serial, 'library serial')}/${TOPOLOGY_FILE}`,
    systemFile: (system: string) => `${base}${segment(system, 'system')}/${SYSTEM_FILE}`,
  };
};
