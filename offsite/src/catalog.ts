import type { z } from 'zod';
import { OffsiteError } from './errors.js';
import { GENERATION, MANIFEST_FILE, keysOf, type GenerationRef } from './layout.js';
import { getJson, listFullKeys, putJson } from './objects.js';
import { s3For, type RemoteConnection } from './remote.js';
import { Manifest, SystemFile, Topology } from './schemas.js';

/** A complete generation found in a bucket: the source of one catalog entry (§2.18). */
export interface ScannedGeneration extends GenerationRef {
  logical_bytes: number;
  stored_bytes: number;
  chunk_count: number;
  /** The manifest's created_at. */
  exported_at: string;
}

/** What a bucket holds: generations with a manifest, and folders of interrupted exports. */
export interface BucketScan {
  complete: ScannedGeneration[];
  /** Generation folders without a (valid) manifest: not importable; retry or delete them. */
  incomplete: GenerationRef[];
}

/** Manifests read at once during a scan. */
const SCAN_CONCURRENCY = 8;

/**
 * Lists the remote's prefix and reads every manifest: the source of a catalog rebuild
 * (POST /api/catalog/rebuild). Nothing in the bucket changes.
 */
export async function scanBucket(remote: RemoteConnection, signal?: AbortSignal): Promise<BucketScan> {
  const s3 = s3For(remote);
  try {
    const keys = keysOf(remote);
    const folders = new Map<string, { ref: GenerationRef; hasManifest: boolean }>();
    for (const { key } of await listFullKeys(s3, remote, keys.base, signal)) {
      const parts = key.slice(keys.base.length).split('/');
      if (parts.length !== 5) continue;
      const [system, library_serial, label, generation, file] = parts as [
        string,
        string,
        string,
        string,
        string,
      ];
      if (!GENERATION.test(generation) || !system || !library_serial || !label) continue;
      const id = parts.slice(0, 4).join('/');
      const entry = folders.get(id) ?? {
        ref: { system, library_serial, label, generation },
        hasManifest: false,
      };
      if (file === MANIFEST_FILE) entry.hasManifest = true;
      folders.set(id, entry);
    }
    const complete: ScannedGeneration[] = [];
    const incomplete: GenerationRef[] = [];
    const todo = [...folders.values()];
    const worker = async () => {
      for (let next = todo.shift(); next; next = todo.shift()) {
        const manifest = next.hasManifest
          ? await getJson(s3, remote, keys.manifest(next.ref), Manifest, signal).catch((err: unknown) => {
              // A manifest that does not parse marks a folder nobody can import: report it as
              // incomplete rather than failing the whole rebuild.
              if (err instanceof OffsiteError && err.code === 'verify_failed') return undefined;
              throw err;
            })
          : undefined;
        if (manifest) {
          complete.push({
            ...next.ref,
            logical_bytes: manifest.logical_bytes,
            stored_bytes: manifest.stored_bytes,
            chunk_count: manifest.chunks.length,
            exported_at: manifest.created_at,
          });
        } else incomplete.push(next.ref);
      }
    };
    await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, worker));
    const order = (a: GenerationRef, b: GenerationRef) =>
      `${a.system}/${a.library_serial}/${a.label}/${a.generation}`.localeCompare(
        `${b.system}/${b.library_serial}/${b.label}/${b.generation}`,
      );
    return { complete: complete.sort(order), incomplete: incomplete.sort(order) };
  } finally {
    s3.destroy();
  }
}

/** The manifest of a generation; undefined when there is none (incomplete or absent). */
export async function readManifest(
  remote: RemoteConnection,
  ref: GenerationRef,
): Promise<Manifest | undefined> {
  const s3 = s3For(remote);
  try {
    return await getJson(s3, remote, keysOf(remote).manifest(ref), Manifest);
  } finally {
    s3.destroy();
  }
}

/** The library topology a system wrote for a serial; undefined when none was written. */
export async function readTopology(
  remote: RemoteConnection,
  system: string,
  serial: string,
  signal?: AbortSignal,
): Promise<Topology | undefined> {
  const s3 = s3For(remote);
  try {
    return await getJson(s3, remote, keysOf(remote).topology(system, serial), Topology, signal);
  } finally {
    s3.destroy();
  }
}

/** Writes <prefix>/<system>/<serial>/topology.json (validated first). */
export async function writeTopology(
  remote: RemoteConnection,
  topology: z.input<typeof Topology>,
): Promise<void> {
  const t = Topology.parse(topology);
  const s3 = s3For(remote);
  try {
    await putJson(s3, remote, keysOf(remote).topology(t.system, t.library_serial), t);
  } finally {
    s3.destroy();
  }
}

/** Writes <prefix>/<system>/.vtl-system.json (validated first). */
export async function writeSystemFile(
  remote: RemoteConnection,
  system: z.input<typeof SystemFile>,
): Promise<void> {
  const s = SystemFile.parse(system);
  const s3 = s3For(remote);
  try {
    await putJson(s3, remote, keysOf(remote).systemFile(s.system), s);
  } finally {
    s3.destroy();
  }
}

/** Reads <prefix>/<system>/.vtl-system.json; undefined when absent. */
export async function readSystemFile(
  remote: RemoteConnection,
  system: string,
): Promise<SystemFile | undefined> {
  const s3 = s3For(remote);
  try {
    return await getJson(s3, remote, keysOf(remote).systemFile(system), SystemFile);
  } finally {
    s3.destroy();
  }
}
