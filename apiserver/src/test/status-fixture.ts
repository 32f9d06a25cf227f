import type { CartridgeSpec, LibrarySpec, NodeStatus, PoolSpec, PoolStatus } from '@vtl/api';
import type { Snapshot } from '@vtl/domain';
import type { ViewCache } from '../services/view-cache.js';

/**
 * A stand-in for the view cache's part the status view reads (snapshot, memo, part, the
 * fingerprints), over a Snapshot a test builds and changes: `libraries` × `slots` full of
 * cartridges, one pool each, a node serving them all. A change says which fingerprints it moves,
 * as the watch cache's modRevisions would.
 */
export class StatusFixture {
  private version = 0;
  private readonly memos = new Map<string, { version: number; value: unknown }>();
  private readonly parts = new Map<string, { fingerprint: string; value: unknown }>();
  private readonly revs = new Map<string, number>();
  s: Snapshot;

  constructor(libraries: number, slots: number) {
    const ids = Array.from({ length: libraries }, (_, i) => i + 1);
    const label = (lib: number, n: number) =>
      `${String.fromCharCode(65 + ((lib - 1) % 26))}${String(lib).padStart(2, '0')}${String(n).padStart(3, '0')}L8`;
    const created = '2026-12-02T10:00:00.000Z';
    const cartridges: CartridgeSpec[] = ids.flatMap((lib) =>
      Array.from({ length: slots }, (_, n) => ({
        label: label(lib, n),
        library: lib,
        home_slot: n + 1,
        created_at: created,
        deleting: false,
        last_export_gen: '',
      })),
    );
    const node = {
      node: 'node-a',
      updated_at: created,
      dataplane: { state: 'running', iscsi_portal: '10.0.0.1:3260', iscsi_sessions: 2 },
      libraries: ids.map((lib) => ({
        id: lib,
        changer_sg: `/dev/sg${lib}`,
        drives: Array.from({ length: 12 }, (_, d) => ({
          index: d,
          library: lib,
          queue_id: d,
          serial: `SN${lib}-${d}`,
          product: 'ULT3580-TD8',
          sg: `/dev/sg${100 + d}`,
          st: `/dev/st${d}`,
          loaded: '',
          source_slot: 0,
          activity: 'idle',
          blocks_written: 0,
          blocks_read: 0,
          iscsi_bytes_written: 0,
          iscsi_bytes_read: 0,
          last_active: created,
        })),
        slots: Array.from({ length: slots }, (_, n) => ({
          kind: 'storage',
          num: n + 1,
          label: label(lib, n),
        })),
      })),
      cartridges: cartridges.map((c) => ({
        label: c.label,
        library: c.library,
        size_bytes: 1000,
        phys_bytes: 900,
        capacity_bytes: 12_000_000_000_000,
        modified: created,
        location: 'slot',
        local_state: 'resident',
      })),
    } as unknown as NodeStatus;
    this.s = {
      libraries: ids.map(
        (id) =>
          ({
            id,
            name: `lib${id}`,
            vendor: 'IBM',
            product: '03584L32',
            variant: 'ts3500',
            serial: `SER${id}`,
            drive_model: 'ULT3580-TD8',
            drive_serials: [],
            num_drives: 12,
            num_slots: slots,
            num_ie: 0,
            label_prefix: '',
            media_dir: '',
            home_pool: id,
            created_at: created,
            deleting: false,
          }) as LibrarySpec,
      ),
      libraryStatus: new Map(),
      pools: ids.map(
        (id) =>
          ({ id, name: `pool${id}`, node: 'node-a', path: `/pools/${id}`, created_at: created }) as PoolSpec,
      ),
      poolStatus: new Map(ids.map((id) => [id, this.poolStatus(id, 0)])),
      nodes: [node],
      cartridges,
      jobs: [],
      dataplane: undefined,
    };
  }

  poolStatus(id: number, used: number): PoolStatus {
    return {
      id,
      node: 'node-a',
      state: 'active',
      detail: '',
      figures: {
        name: `pool${id}`,
        mountpoint: `/pools/${id}`,
        fs_total_bytes: 1e12,
        fs_used_bytes: used,
        logical_bytes: used,
        dedup_ratio: 1,
        compress_ratio: 1,
        record_bytes: 0,
        phys_est_bytes: used,
        zpool_size_bytes: 0,
        zpool_alloc_bytes: 0,
        collected_at: new Date(used).toISOString(),
        vdo_logical_bytes: 0,
        vdo_physical_bytes: 0,
        vdo_saving_pct: 0,
      },
    };
  }

  /** A change of the records: `mutate` edits the snapshot, `moves` the fingerprints it changes. */
  change(mutate: (s: Snapshot) => void, moves: string[] = []): void {
    this.s = { ...this.s, poolStatus: new Map(this.s.poolStatus), libraries: [...this.s.libraries] };
    mutate(this.s);
    for (const m of moves) this.revs.set(m, (this.revs.get(m) ?? 0) + 1);
    this.version++;
  }

  /** A pool's figures rewritten, as its nodeagent does every 5 s. */
  poolFigures(id: number, used: number): void {
    this.change((s) => s.poolStatus.set(id, this.poolStatus(id, used)));
  }

  snapshot(): Snapshot {
    return this.s;
  }
  memo<T>(name: string, compute: () => T): T {
    const hit = this.memos.get(name);
    if (hit && hit.version === this.version) return hit.value as T;
    const value = compute();
    this.memos.set(name, { version: this.version, value });
    return value;
  }
  part<T>(name: string, fingerprint: string, compute: () => T): T {
    const hit = this.parts.get(name);
    if (hit && hit.fingerprint === fingerprint) return hit.value as T;
    const value = compute();
    this.parts.set(name, { fingerprint, value });
    return value;
  }
  libraryFingerprint(lib: LibrarySpec): string {
    return `${lib.id}:${this.revs.get(`library-${lib.id}`) ?? 0}:${this.revs.get('cartridges') ?? 0}`;
  }
  cartridgesFingerprint(): string {
    return String(this.revs.get('cartridges') ?? 0);
  }
  gitopsStatus(): ReturnType<ViewCache['gitopsStatus']> {
    return [];
  }

  /** This fixture where a ViewCache is taken. */
  get views(): ViewCache {
    return this as unknown as ViewCache;
  }
}
