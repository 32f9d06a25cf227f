import {
  isJobActive,
  badRequest,
  notFound,
  type CartridgeSpec,
  type DataplaneSpec,
  type Job,
  type LibrarySpec,
  type LibraryStatus,
  type NodeStatus,
  type ObservedCartridge,
  type ObservedLibrary,
  type PoolSpec,
  type PoolStatus,
} from '@vtl/api';

/**
 * Everything the read views and the refusal checks look at, read in one go. An appliance
 * holds tens of libraries and thousands of cartridges at most, so whole-prefix reads are cheap
 * and keep every view consistent with itself.
 */
export interface Snapshot {
  libraries: LibrarySpec[];
  libraryStatus: Map<number, LibraryStatus>;
  pools: PoolSpec[];
  poolStatus: Map<number, PoolStatus>;
  nodes: NodeStatus[];
  cartridges: CartridgeSpec[];
  jobs: Job[];
  dataplane: DataplaneSpec | undefined;
}

/** The live view of a library as the data plane reports it, if some node serves it. */
export function observedLibrary(s: Snapshot, id: number): ObservedLibrary | undefined {
  for (const node of s.nodes) {
    const lib = node.libraries.find((l) => l.id === id);
    if (lib) return lib;
  }
  return undefined;
}

/** What the nodeagents observe of every cartridge image, by label. */
export function observedCartridges(s: Snapshot): Map<string, ObservedCartridge> {
  const out = new Map<string, ObservedCartridge>();
  for (const node of s.nodes) for (const c of node.cartridges) out.set(c.label, c);
  return out;
}

export const activeJobs = (s: Snapshot) => s.jobs.filter((j) => isJobActive(j.state));

export const libraryState = (s: Snapshot, id: number) => s.libraryStatus.get(id)?.state ?? 'pending_restart';

/** The node that owns a library's pool, i.e. the nodeagent that carries out work on it. */
export function nodeOfLibrary(s: Snapshot, lib: LibrarySpec): string | undefined {
  return s.pools.find((p) => p.id === lib.home_pool)?.node;
}

/** A library by id, a deleting one included: 404 when there is none. */
export function findLibrary(s: Snapshot, id: number): LibrarySpec {
  const lib = s.libraries.find((l) => l.id === id);
  if (!lib) throw notFound(`No library ${id}; GET /api/libraries lists them.`);
  return lib;
}

/** Ids of libraries the data plane serves now. */
export function liveLibraryIds(s: Snapshot): number[] {
  return s.libraries.filter((l) => !l.deleting && observedLibrary(s, l.id)).map((l) => l.id);
}

/** 400 while any export, evict or import job is active or queued. */
export function refuseWithActiveJobs(s: Snapshot, what: string): void {
  const jobs = activeJobs(s);
  if (jobs.length > 0)
    throw badRequest(
      `${what} is refused while ${jobs.length} job(s) are active or queued (${jobs
        .slice(0, 5)
        .map((j) => `${j.kind} ${j.id}`)
        .join(', ')}); wait for them or cancel the queued ones.`,
      { jobs: jobs.map((j) => j.id) },
    );
}

/** 400 while any drive of any library holds a cartridge. */
export function refuseWithLoadedDrives(s: Snapshot, what: string): void {
  const loaded = s.nodes.flatMap((n) =>
    n.libraries.flatMap((l) =>
      l.drives.filter((d) => d.loaded).map((d) => `${d.loaded} in drive ${d.index} of library ${l.id}`),
    ),
  );
  if (loaded.length > 0)
    throw badRequest(
      `${what} is refused while a drive holds a cartridge (${loaded.join(', ')}); unload it first.`,
    );
}

/**
 * The pool a new library is homed in (declare and recover alike): it exists, its node reports it
 * active, and no library is homed in it yet. 400 naming what to pick otherwise.
 */
export function requireFreeActivePool(s: Snapshot, poolId: number): PoolSpec {
  const pool = s.pools.find((p) => p.id === poolId);
  if (!pool) throw badRequest(`pool_id ${poolId} names no pool; GET /api/pools lists them.`);
  if (s.poolStatus.get(pool.id)?.state !== 'active')
    throw badRequest(`Pool "${pool.name}" is not active; check its node (GET /api/pools shows why).`);
  const home = s.libraries.find((l) => l.home_pool === pool.id);
  if (home)
    throw badRequest(`Pool "${pool.name}" already homes library ${home.id} (${home.name}); use a free pool.`);
  return pool;
}
